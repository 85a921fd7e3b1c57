// Daily clean-up of identity's own rows: sign-in history is kept 90 days; sessions, tickets, links
// and stale sign-ups are deleted once nothing can use them (a week after they ended, so support can
// still see a recent sign-out). OAuth's and social sign-in's rows are pruned by their own modules;
// the console's sessions and sign-in links (the team's own sign-in) are pruned here too.
import type { Db } from '../../db.ts';

export async function pruneIdentity(db: Db): Promise<Record<string, number>> {
  const ago = (days: number) => db.raw(`now() - make_interval(days => ?)`, [days]);
  return {
    sign_ins: await db('end_user_sign_ins').where('time', '<', ago(90)).delete(),
    sessions: await db('end_user_sessions')
      .where('expire_time', '<', ago(7))
      .orWhere('revoke_time', '<', ago(7))
      .orWhere('idle_expire_time', '<', ago(7))
      .delete(),
    tickets: await db('end_user_tickets').where('expire_time', '<', ago(1)).delete(),
    email_tokens: await db('end_user_email_tokens').where('expire_time', '<', ago(1)).delete(),
    // A sign-up whose job died (dead letter) keeps its sealed password no longer than a day.
    pending_signups: await db('identity_pending_signups').where('create_time', '<', ago(1)).delete(),
    lockouts: await db('identity_lockouts').where('update_time', '<', ago(1)).delete(),
    console_sessions: await db('console_sessions')
      .where('expire_time', '<', ago(7))
      .orWhere('end_time', '<', ago(7))
      .delete(),
    console_links: await db('console_links').where('expire_time', '<', ago(1)).delete(),
    rate_limits: await db('identity_rate_limits')
      .where('expire', '<', Date.now() - 3600_000)
      .delete(),
  };
}

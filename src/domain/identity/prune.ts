// Daily clean-up (the `identity.prune` job): sign-in history is kept 90 days; sessions, tickets,
// links and stale sign-ups are deleted once nothing can use them (a week after they ended, so
// support can still see a recent sign-out). Each feature prunes its own rows in its query module;
// OAuth's device requests, social sign-ins and the console's sessions and sign-in links (the team's
// own sign-in) ride on this job.
import type { Db } from '../../db.ts';
import { pruneConsole } from '../console/queries.ts';
import { pruneDeviceRequests } from '../oauth/queries.ts';
import { pruneSocialTransactions } from '../social/queries.ts';
import { pruneRateLimits } from './limits-queries.ts';
import { pruneEmailTokens } from './links/queries.ts';
import { pruneLockouts } from './lockout/queries.ts';
import { pruneSessions } from './sessions/queries.ts';
import { prunePendingSignups } from './signup/queries.ts';
import { pruneTickets } from './tickets/queries.ts';
import { pruneSignIns } from './users/queries.ts';

/** Deletes what nothing can use any more; answers how many rows went, by kind. */
export async function pruneIdentity(db: Db): Promise<Record<string, number>> {
  return {
    sign_ins: await pruneSignIns(db),
    sessions: await pruneSessions(db),
    tickets: await pruneTickets(db),
    email_tokens: await pruneEmailTokens(db),
    pending_signups: await prunePendingSignups(db),
    lockouts: await pruneLockouts(db),
    ...(await pruneConsole(db)),
    rate_limits: await pruneRateLimits(db),
    device_authorizations: await pruneDeviceRequests(db),
    social_transactions: await pruneSocialTransactions(db),
  };
}

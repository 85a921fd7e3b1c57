// Ten enabled alert rules for bench/errors.ts's "processed" variant: a mix of what a team sets up
// (new groups, regressions, frequency thresholds, some narrowed by a search), each mailing someone
// (without SMTP_URL the mail goes to the outbox, as under `npm start`), so the figure includes the
// firings' send jobs the worker then runs.
import type { Knex } from 'knex';
import { newId } from '../src/ids.ts';

const rules: { when: string; q?: string; events?: number; minutes?: number }[] = [
  { when: 'new_group' },
  { when: 'new_group', q: 'service:api' },
  { when: 'new_group', q: 'TypeError' },
  { when: 'new_group', q: 'level:error' },
  { when: 'regression' },
  { when: 'regression', q: 'release:r0' },
  { when: 'regression', q: '!service:worker' },
  { when: 'frequency', events: 100, minutes: 5 },
  { when: 'frequency', events: 1000, minutes: 60, q: 'is:unresolved' },
  { when: 'frequency', events: 10, minutes: 1 },
];

export async function addBenchRules(db: Knex, envId: string): Promise<void> {
  await db('alert_rules').insert(
    rules.map((r, i) => ({
      id: newId('alr'),
      env_id: envId,
      name: `bench rule ${i + 1}`,
      when: r.when,
      q: r.q ?? '',
      threshold_events: r.events ?? null,
      threshold_window_minutes: r.minutes ?? null,
      actions: JSON.stringify([{ type: 'email', to: [`oncall+${i}@example.com`] }]),
    })),
  );
}

/** The rules go, and what they made with them (firings, snoozes, minutes: cascaded or deleted). */
export async function dropBenchRules(db: Knex, envId: string): Promise<void> {
  await db('alert_rules').where({ env_id: envId }).delete();
  await db('alert_group_minutes').where({ env_id: envId }).delete();
}

/** The firings the rules made, and their actions still pending (a send backlog shows here). */
export async function benchFirings(db: Knex, envId: string): Promise<{ firings: number; pending: number }> {
  const firings = Number((await db('alert_firings').where({ env_id: envId }).count({ n: '*' }).first())?.n);
  const pending = Number(
    (
      await db('alert_firing_actions as a')
        .join('alert_firings as f', 'f.id', 'a.firing_id')
        .where({ 'f.env_id': envId, 'a.state': 'pending' })
        .count({ n: '*' })
        .first()
    )?.n,
  );
  return { firings, pending };
}

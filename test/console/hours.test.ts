// A group's hourly counts (error_group_hours) are kept by the worker's store in the statement that
// stores the events, from the same rows: they sum to the group's occurrence count (exactly once as
// it is), the console's daily counts read them by UTC day, and the daily prune deletes hours past
// the environment's retention.
import { describe, expect, it } from 'vitest';
import { dailyCounts } from '../../src/domain/errors/groups/queries.ts';
import { pruneErrors } from '../../src/domain/errors/retention/prune.ts';
import { createTestEnv } from '../support/harness.ts';
import { capture, groupIdOf, readStored, sampleEvent, useStack } from '../errors/support.ts';

const t = useStack();

const hours = async (groupId: string) =>
  (await t.h.db('error_group_hours').where({ group_id: groupId }).orderBy('hour')) as {
    env_id: string;
    hour: Date;
    count: number;
  }[];

describe('hourly counts', () => {
  it('add up to the occurrence count, by hour of receipt, and read back by UTC day', async () => {
    const event = sampleEvent({ exception_type: 'HoursError', message: 'counted by the hour' });
    const uids = await Promise.all(Array.from({ length: 7 }, () => capture(t.s.web, t.env, event)));
    const stored = await Promise.all(uids.map((uid) => readStored(t.s.web, t.env, uid)));
    const groupId = groupIdOf(stored[0]!.body.name);
    const group = await t.h.db('error_groups').where({ id: groupId }).first();
    const rows = await hours(groupId);
    expect(rows.reduce((n, r) => n + r.count, 0)).toBe(Number(group.occurrence_count));
    expect(Number(group.occurrence_count)).toBe(7);
    for (const r of rows) {
      expect(r.env_id).toBe(t.env.env.id);
      expect(r.hour.getTime() % 3_600_000).toBe(0);
      expect(Date.now() - r.hour.getTime()).toBeLessThan(2 * 3_600_000);
    }

    // Two days ago, and a day past the window, as the console reads them.
    const day = 86_400_000;
    const today = new Date();
    const midnight = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
    await t.h.db('error_group_hours').insert([
      { group_id: groupId, env_id: t.env.env.id, hour: new Date(midnight - 2 * day + 23 * 3_600_000), count: 4 },
      { group_id: groupId, env_id: t.env.env.id, hour: new Date(midnight - 14 * day), count: 100 },
    ]);
    const daily = await dailyCounts(t.h.db, t.env.env.id, [groupId, 'eg_none'], today, 14);
    const expected = new Array<number>(14).fill(0);
    expected[11] = 4;
    for (const r of rows) expected[13 - (midnight - Math.floor(r.hour.getTime() / day) * day) / day]! += r.count;
    expect(daily.get(groupId)).toEqual(expected);
    expect(daily.get('eg_none')).toEqual(new Array(14).fill(0));
    // Another environment's id reads nothing of this one.
    const other = await createTestEnv(t.h.db);
    expect((await dailyCounts(t.h.db, other.env.id, [groupId], today, 14)).get(groupId)).toEqual(new Array(14).fill(0));

    // The prune deletes the hours past retention (90 days by default), and keeps the others.
    await t.h.db('error_group_hours').insert({
      group_id: groupId,
      env_id: t.env.env.id,
      hour: new Date(midnight - 91 * day),
      count: 1,
    });
    await pruneErrors(t.h.db, new Date());
    const kept = await hours(groupId);
    expect(kept.map((r) => r.count).sort((a, b) => a - b)).toEqual(
      [...rows.map((r) => r.count), 4, 100].sort((a, b) => a - b),
    );
  });
});

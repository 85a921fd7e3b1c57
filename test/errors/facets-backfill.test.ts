// The facets backfill (src/domain/errors/facets/backfill.ts) on the real Postgres, with the real
// worker running its job: events stored before the store kept facets (facets_kept false) get
// their groups' tags, users, user_count and first release exactly once, however the walk is cut
// short, repeated or run twice at once; events the store counted itself are never counted again.
import type { Knex } from 'knex';
import { fromKnex } from 'pg-boss';
import { beforeAll, describe, expect, it } from 'vitest';
import { keyringFromConfig } from '../../src/crypto.ts';
import { backfillFacets } from '../../src/domain/errors/facets/backfill.ts';
import { createPipelineCaches } from '../../src/domain/errors/pipeline/caches.ts';
import { ingestEvents, type IngestDeps, type JobEvent } from '../../src/domain/errors/intake/ingest.ts';
import { eventually } from '../support/probes.ts';
import { useStack } from './support.ts';
import { facetsOfGroups, fetchedSdkEvent, sdkEvent, tally, type GroupFacets } from './facets-support.ts';

const t = useStack();
let deps: IngestDeps;

beforeAll(async () => {
  // The release queued the job (the test template's too): its run on the empty database is over first.
  await eventually(async () => (await t.h.db('error_facets_backfill').first('done_time')).done_time !== null);
  deps = {
    db: t.h.db,
    keyring: keyringFromConfig(t.h.config),
    load: () => Promise.reject(new Error('no maps in this test')),
    caches: createPipelineCaches(),
  };
});

const storeOnce = (rows: JobEvent[]) => t.h.db.transaction((trx) => ingestEvents(deps, fromKnex(trx), rows));
const groups = (type: string) => facetsOfGroups(t.h.db, t.env.env.id, type);

/** Events of three groups (`type` 0-2), each with tags and a user; `old` ones come before the facets. */
function eventsOf(type: string, n: number, offset = 0): JobEvent[] {
  return Array.from({ length: n }, (_, i) =>
    fetchedSdkEvent(
      deps.keyring,
      t.env.env.id,
      sdkEvent(`${type}${(offset + i) % 3}`, {
        release: `rel-${(offset + i) % 2}`,
        tags: { color: `c${(offset + i) % 4}` },
        user: { id: `user-${(offset + i) % 5}` },
      }),
    ),
  );
}

/**
 * Makes the stored events of `type` look stored before the facets existed: their flag unset and
 * their groups' tags, users, user counts and first releases gone, as the migration left them.
 */
async function asBeforeFacets(db: Knex, type: string, uids: string[]): Promise<void> {
  const ids = (await db('error_groups')
    .where({ env_id: t.env.env.id })
    .whereLike('title', `${type}%`)
    .pluck('id')) as string[];
  await db('error_events').whereIn('uid', uids).update({ facets_kept: false });
  await db('error_group_tags').whereIn('group_id', ids).delete();
  await db('error_group_users').whereIn('group_id', ids).delete();
  await db('error_groups').whereIn('id', ids).update({ user_count: 0, first_release: '' });
  await db('error_facets_backfill').update({ env_id: null, receive_time: null, uid: null, events: 0, done_time: null });
}

/** What the store made of events `from`..`to` of eventsOf(type, …): per group 0-2. */
function expected(from: number, to: number): Omit<GroupFacets, 'first_release'>[] {
  return [0, 1, 2].map((g) => {
    const mine = Array.from({ length: to - from }, (_, i) => from + i).filter((i) => i % 3 === g);
    const users = tally(mine.map((i) => `id:user-${i % 5}`));
    return {
      tags: {
        ...tally(mine.map((i) => `color=c${i % 4}`)),
        ...tally(mine.map((i) => `release=rel-${i % 2}`)),
        'level=error': mine.length,
      },
      users,
      user_count: Object.keys(users).length,
    };
  });
}

const withoutFirst = (gs: GroupFacets[]) => gs.map(({ first_release: _f, ...g }) => g);

describe('the facets backfill', () => {
  it('adds what the store would have, once, however often it runs or is cut short', async () => {
    const rows = eventsOf('Backfilled', 40);
    expect((await storeOnce(rows)).stored).toBe(40);
    const kept = await groups('Backfilled');
    expect(withoutFirst(kept)).toEqual(expected(0, 40));
    await asBeforeFacets(
      t.h.db,
      'Backfilled',
      rows.map((r) => r.uid),
    );
    expect((await groups('Backfilled')).every((g) => g.user_count === 0 && Object.keys(g.tags).length === 0)).toBe(
      true,
    );

    // Killed after its second batch committed (the error stands for the kill): the rest waits.
    const stop = new Error('killed');
    let batches = 0;
    await expect(
      backfillFacets(t.h.db, {
        batch: 7,
        afterBatch: () => {
          if (++batches === 2) throw stop;
        },
      }),
    ).rejects.toBe(stop);
    expect(await t.h.db('error_facets_backfill').first('events', 'done_time')).toEqual({
      events: '14',
      done_time: null,
    });
    // Two runs at once (a retry beside the late first run) take turns on the cursor; a third finds it done.
    const [a, b] = await Promise.all([backfillFacets(t.h.db, { batch: 5 }), backfillFacets(t.h.db, { batch: 5 })]);
    expect(a.events + b.events).toBe(26);
    expect(await backfillFacets(t.h.db)).toEqual({ events: 0, done: true });
    expect(await groups('Backfilled')).toEqual(kept);
  });

  it('never counts again what the store counted: only events stored without facets are added', async () => {
    const before = eventsOf('Mixed', 30);
    expect((await storeOnce(before)).stored).toBe(30);
    await asBeforeFacets(
      t.h.db,
      'Mixed',
      before.map((r) => r.uid),
    );
    // Stored after the release (a queue's backlog among them): counted by the store itself.
    const after = eventsOf('Mixed', 30, 30);
    expect((await storeOnce(after)).stored).toBe(30);
    expect(await backfillFacets(t.h.db, { batch: 8 })).toMatchObject({ done: true });
    expect(withoutFirst(await groups('Mixed'))).toEqual(expected(0, 60));
  });

  it('runs as the worker’s job, and fills the first release of a group that has none', async () => {
    const rows = eventsOf('ByJob', 9);
    await storeOnce(rows);
    const kept = await groups('ByJob');
    expect(kept.map((g) => g.first_release).every((r) => r.startsWith('rel-'))).toBe(true);
    await asBeforeFacets(
      t.h.db,
      'ByJob',
      rows.map((r) => r.uid),
    );
    await t.s.worker!.jobs.enqueue(t.h.db, 'errors.backfill-facets', {});
    await eventually(async () => (await t.h.db('error_facets_backfill').first('done_time')).done_time !== null);
    expect(await groups('ByJob')).toEqual(kept);
  });
});

// The plan of the worker's store statement (intake/store-queries.ts) for a batch of 400 events in
// 200 groups, once the events table holds rows and statistics. Postgres estimates the statement's
// own CTEs (the batch's rows, the groups it inserted or locked) at a row or two, so a join of the
// two was planned as a nested loop that compared every event with every group: quadratic in the
// batch, once per insert that joined them (five). The store looks each row's group up in one map
// of the batch's groups instead, so its plan joins nothing with the inserted groups.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import { storeSql } from '../../src/domain/errors/intake/store-queries.ts';
import { reopenOnOccurrence } from '../../src/domain/errors/groups/state.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';

const stack = {} as { h: Harness };
let envId = '';

interface PlanNode {
  'Node Type': string;
  'CTE Name'?: string;
  Plans?: PlanNode[];
}

beforeAll(async () => {
  stack.h = await createHarness();
  envId = (await createTestEnv(stack.h.db)).env.id;
  const db = stack.h.db;
  // A store with history: 2,000 groups and 20,000 events, analysed.
  await db.raw(
    `insert into error_groups (id, env_id, fingerprint, title, culprit, service_name, etag, first_seen_time,
       last_seen_time, occurrence_count)
     select 'eg_' || lpad(i::text, 26, '0'), ?, 'old' || i, 'Error ' || i, 'f.ts', 'api', 'etag', now(), now(), 10
     from generate_series(1, 2000) i`,
    [envId],
  );
  await db.raw(
    `insert into error_events (uid, env_id, group_id, event_time, receive_time, release, service_name, body_deflated)
     select 'err_' || lpad(i::text, 26, '0'), ?, 'eg_' || lpad((1 + i % 2000)::text, 26, '0'), now(), now(), 'r1', 'api', '\\x00'
     from generate_series(1, 20000) i`,
    [envId],
  );
  await db.raw('analyze error_groups, error_events');
}, 120_000);
afterAll(async () => {
  await stack.h?.close();
});

/** Every node of the plan with its parent's node type. */
function nodes(node: PlanNode, parent = ''): { node: PlanNode; parent: string }[] {
  return [{ node, parent }, ...(node.Plans ?? []).flatMap((child) => nodes(child, node['Node Type']))];
}

describe('the store statement', () => {
  it('never joins the batch with the groups it inserted: each row looks its group up in one map', async () => {
    const now = new Date().toISOString();
    const groups = Array.from({ length: 200 }, (_, i) => ({
      id: newId('eg'),
      env_id: envId,
      fingerprint: `new${i}`,
      title: `TypeError: new ${i}`,
      culprit: 'app.js',
      service_name: 'api',
      etag: 'etag',
      grouping: {},
    }));
    const events = Array.from({ length: 400 }, (_, i) => ({
      uid: newId('err'),
      env_id: envId,
      fingerprint: `new${i % 200}`,
      event_time: now,
      receive_time: now,
      release: 'r2',
      service_name: 'api',
      body_deflated: Buffer.from('body').toString('base64'),
      event_id: null,
      tags: [['browser', 'Chrome']],
      user_key: `id:u${i % 7}`,
      user_id: `u${i % 7}`,
    }));
    const connection = await stack.h.db.client.acquireConnection();
    try {
      const { rows } = await connection.query(`explain (format json) ${storeSql}`, [
        JSON.stringify(events),
        JSON.stringify(groups),
        reopenOnOccurrence.from,
        reopenOnOccurrence.to,
        [envId],
      ]);
      const plan = nodes((rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan);
      const scansOfG = plan.filter(({ node }) => node['Node Type'] === 'CTE Scan' && node['CTE Name'] === 'g');
      // g is read (the map, the changed groups), never as a side of a join.
      expect(scansOfG.length).toBeGreaterThan(0);
      expect(scansOfG.map((s) => s.parent)).not.toContainEqual(expect.stringMatching(/Nested Loop|Hash|Merge Join/));
      // The events are read from the joined rows once, not joined again per insert.
      expect(
        plan.filter(
          ({ node }) => node['Node Type'] === 'Nested Loop' && JSON.stringify(node).includes('"CTE Name":"g"'),
        ),
      ).toEqual([]);
    } finally {
      await stack.h.db.client.releaseConnection(connection);
    }
  });
});

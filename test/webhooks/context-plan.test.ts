// The plans of a fetch's attempt contexts and of its successes' record (deliveries/batch-queries.ts)
// when the deliveries table has grown before any statistics were taken, as in the minutes after a
// burst of messages: each delivery is read by its own keys, never by the endpoint or by its state
// with the message as a filter (the plain joins read every delivery of the endpoint, or every
// pending one, for each attempt: 5.5 and 1.1 ms per fetch of 16 in bench/webhooks.ts, two thirds
// of a delivery's Postgres time).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptContextsSql, recordSuccessesSql } from '../../src/domain/webhooks/deliveries/batch-queries.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';

const stack = {} as { h: Harness };

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];
let envId = '';

/** `n` messages of the environment, each with a delivery to endpoint `whe_bench`, numbered from `from`. */
async function deliveries(from: number, n: number): Promise<void> {
  const db = stack.h.db;
  await db.raw(
    `insert into webhook_messages (id, env_id, event_type, subject, body)
     select 'msg_' || lpad(i::text, 26, '0'), ?, 'user.created', 'usr_' || i, '{}' from generate_series(?::int, ?::int) i`,
    [envId, from, from + n - 1],
  );
  await db.raw(
    `insert into webhook_deliveries (endpoint_id, message_id, env_id, subject, seq, state)
     select 'whe_bench', 'msg_' || lpad(i::text, 26, '0'), ?, 'usr_' || i, i, 'pending' from generate_series(?::int, ?::int) i`,
    [envId, from, from + n - 1],
  );
}

beforeAll(async () => {
  stack.h = await createHarness();
  envId = (await createTestEnv(stack.h.db)).env.id;
  await stack.h.db.raw(
    `insert into webhook_endpoints (id, env_id, url, event_types, secret_sealed) values ('whe_bench', ?, 'https://example.com/hook', '{}', 'sealed')`,
    [envId],
  );
  // 5,000 deliveries before any statistics are taken (autovacuum's analyze comes later).
  await deliveries(1, 5000);
}, 60_000);
afterAll(async () => {
  await stack.h?.close();
});

describe("a fetch's attempt contexts", () => {
  it('read each delivery by its own keys, whatever the statistics say', async () => {
    const ids = Array.from({ length: 16 }, (_, i) => `msg_${String(5000 - i * 300).padStart(26, '0')}`);
    const { rows } = await stack.h.db.raw<{ rows: { 'QUERY PLAN': string }[] }>(
      `explain (analyze, costs off, timing off, summary off) ${attemptContextsSql}`,
      [ids.map(() => 'whe_bench'), ids],
    );
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    // One index probe per attempt that finds its one delivery (by primary key, or by message and
    // then endpoint: a message has one delivery per endpoint), none read and thrown away.
    expect(plan).toMatch(
      /Index Scan using webhook_deliveries_(pkey|message_id_index) on webhook_deliveries d \(actual rows=1 loops=16\)/,
    );
    expect(plan).not.toMatch(/Rows Removed by (Join )?Filter/);
    const found = await stack.h.db.raw<{ rows: unknown[] }>(attemptContextsSql, [ids.map(() => 'whe_bench'), ids]);
    expect(found.rows).toHaveLength(16);
  });

  it('record successes reading and locking each delivery by its own keys', async () => {
    const numbers = Array.from({ length: 16 }, (_, i) => 4000 - i * 200);
    const successes = numbers.map((n) => ({
      endpoint_id: 'whe_bench',
      message_id: `msg_${String(n).padStart(26, '0')}`,
      // As the fetch's contexts read them (deliveries() numbers subject and seq with the message).
      subject: `usr_${n}`,
      seq: String(n),
      number: 1,
      time: new Date().toISOString(),
      status_code: 200,
      duration_ms: 3,
    }));
    // Run (analyze) and rolled back: the plan Postgres chose, on the table as it was.
    const connection = await stack.h.db.client.acquireConnection();
    let plan: PlanNode;
    try {
      await connection.query('begin');
      const { rows } = await connection.query(
        `explain (analyze, format json, timing off, summary off) ${recordSuccessesSql.replace('?', '$1')}`,
        [JSON.stringify(successes)],
      );
      plan = (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan;
    } finally {
      await connection.query('rollback');
      await stack.h.db.client.releaseConnection(connection);
    }
    // Locked and updated (the lane and seq come with the success, from the fetch's contexts): two
    // reads of the table, one delivery each per attempt.
    const scans = nodes(plan).filter(
      (n) => n['Relation Name'] === 'webhook_deliveries' && n['Node Type'].endsWith('Scan'),
    );
    expect(scans).toHaveLength(2);
    for (const scan of scans) {
      expect(scan['Rows Removed by Filter'] ?? 0).toBe(0);
      expect(scan['Actual Rows']).toBe(1);
    }
    // What it recorded, for real this time: all 16, each once.
    const { rows } = await stack.h.db.raw<{ rows: unknown[] }>(recordSuccessesSql, [JSON.stringify(successes)]);
    expect(rows).toHaveLength(16);
    const again = await stack.h.db.raw<{ rows: unknown[] }>(recordSuccessesSql, [JSON.stringify(successes)]);
    expect(again.rows).toHaveLength(0);
  });
});

// What evaluation costs a batch, on a real Postgres: a worker's copy of an environment's rules is
// read once and used until it is `freshMs` old (a rule created meanwhile applies from then on, and a
// disabled one stops), and a batch for which no rule can fire (no new group, no reopened one, no
// counted group) runs no alert statement at all, not even the savepoint.
import type { Knex } from 'knex';
import { fromKnex } from 'pg-boss';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SqlTx } from '../../src/db.ts';
import { fireAlerts } from '../../src/domain/alerts/fire/evaluate.ts';
import { RuleCache } from '../../src/domain/alerts/fire/rule-cache.ts';
import type { Jobs } from '../../src/jobs/index.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { testJobs } from '../errors/support.ts';
import { insertRule } from './support.ts';

let h: Harness;
let jobs: Jobs;

beforeAll(async () => {
  h = await createHarness();
  jobs = await testJobs(h);
});
afterAll(async () => {
  await jobs?.boss.stop({ graceful: false, close: true });
  await h?.close();
});

/** A transaction's statements, counted as they are run. */
function counted(trx: Knex.Transaction): { tx: ReturnType<typeof fromKnex>; statements: string[] } {
  const tx = fromKnex(trx);
  const statements: string[] = [];
  return {
    statements,
    tx: {
      executeSql: (text: string, values?: unknown[]) => {
        statements.push(text);
        return tx.executeSql(text, values);
      },
    } as ReturnType<typeof fromKnex> & SqlTx,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it("reads an environment's rules once, until its copy is freshMs old", async () => {
  const env = await createTestEnv(h.db);
  const other = await createTestEnv(h.db);
  const first = await insertRule(h, env, { when: 'new_group', email: ['a@example.com'] });
  const cache = new RuleCache(400);
  const read = (ids: string[]) =>
    h.db.transaction(async (trx) => {
      const { tx, statements } = counted(trx);
      const rules = await cache.rulesOf(tx, ids);
      return { ids: rules.map((r) => r.id).sort(), statements: statements.length };
    });

  expect(await read([env.env.id, other.env.id])).toEqual({ ids: [first], statements: 1 });
  const second = await insertRule(h, env, { when: 'regression', email: ['b@example.com'] });
  await h.db('alert_rules').where({ id: first }).update({ state: 'disabled' });
  // Within freshMs the copy answers, without a statement; an environment with no rule is kept too.
  expect(await read([env.env.id, other.env.id])).toEqual({ ids: [first], statements: 0 });
  await sleep(450);
  expect(await read([env.env.id])).toEqual({ ids: [second], statements: 1 });
  expect(await read([other.env.id])).toEqual({ ids: [], statements: 1 });
});

it('runs no alert statement for a batch no rule can fire for', async () => {
  const env = await createTestEnv(h.db);
  for (const when of ['new_group', 'regression'] as const) await insertRule(h, env, { when, email: ['c@example.com'] });
  await insertRule(h, env, {
    when: 'frequency',
    threshold_events: 1,
    threshold_window_minutes: 5,
    email: ['c@example.com'],
  });
  const deps = { db: h.db, jobs, baseUrl: 'https://cairn.example.com', log: pino({ level: 'silent' }) };
  const result = await h.db.transaction(async (trx) => {
    const { tx, statements } = counted(trx);
    const rules = await new RuleCache().rulesOf(tx, [env.env.id]);
    const before = statements.length;
    // Groups stored, none created or reopened, none counted (say, another environment's only).
    const fired = await fireAlerts(deps, tx, rules, { changed: [], minuteGroups: [] });
    return { rules: rules.length, fired, statements: statements.length - before };
  });
  expect(result).toEqual({ rules: 3, fired: 0, statements: 0 });
});

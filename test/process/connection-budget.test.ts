// The connection budget (db.ts connectionShares): 2 web + 2 worker processes, as the Procfile
// starts them, never hold more than 20 connections to Cairn's database together while they accept
// and process captures, and a retired variable is refused at start-up with what to set instead.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionShares } from '../../src/db.ts';
import { createHarness, sqlNumber, createTestEnv, call, type Harness } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { spawnWeb, spawnWorker } from '../support/web-process.ts';
import { sampleEvent } from '../errors/support.ts';

let h: Harness;
const stops: (() => Promise<void>)[] = [];
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()));
  await h?.close();
});

const connections = () =>
  sqlNumber(
    h.db,
    "select count(*) from pg_stat_activity where datname = current_database() and application_name like 'cairn-%'",
  );

describe('the connection budget', () => {
  it('splits a process budget of 3 (web) and 7 (worker) so that 2 of each make 20', () => {
    const web = connectionShares({}, 'web');
    const worker = connectionShares({}, 'worker');
    for (const s of [web, worker]) expect(s.knex + s.boss + s.sessions).toBe(s.total);
    expect(2 * web.total + 2 * worker.total).toBe(20);
    // A worker's pg-boss pool holds one connection per transactional handler running (2) and one more.
    expect(worker).toEqual({ total: 7, knex: 2, boss: 3, sessions: 2 });
    expect(connectionShares({ CAIRN_DB_MAX_CONNECTIONS: 12 }, 'worker')).toEqual({
      total: 12,
      knex: 6,
      boss: 4,
      sessions: 2,
    });
    expect(() => connectionShares({ CAIRN_DB_MAX_CONNECTIONS: 6 }, 'worker')).toThrow(/a worker needs at least 7/);
  });

  it('holds 2 web + 2 worker processes within 20 connections while they take and process captures', async () => {
    const env = await createTestEnv(h.db);
    const webs = await Promise.all([0, 1].map(() => spawnWeb(h.config.DATABASE_URL)));
    const workers = await Promise.all([0, 1].map(() => spawnWorker(h.config.DATABASE_URL)));
    const procs = [...webs, ...workers];
    stops.push(...procs.map((p) => p.kill));
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await connections());
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    const path = `/v1/${env.env.name}/error_groups`;
    const batches = Array.from({ length: 6 }, (_, i) =>
      call(webs[i % 2]!.url, 'POST', `${path}:batchCapture`, {
        key: env.secretKey,
        body: { error_events: Array.from({ length: 200 }, (_, k) => sampleEvent({ message: `b${i}-${k}` })) },
      }),
    );
    const singles = Array.from({ length: 200 }, (_, i) =>
      call(webs[i % 2]!.url, 'POST', `${path}:capture`, {
        key: env.secretKey,
        body: { error_event: sampleEvent({ message: `s${i}` }) },
      }),
    );
    const answers = await Promise.all([...batches, ...singles]);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 202));
    await eventually(async () => Number((await h.db('error_events').count({ n: '*' }).first())?.n) === 6 * 200 + 200, {
      timeoutMs: 60_000,
    });
    sampling = false;
    await sampler;
    expect(peak).toBeGreaterThan(4);
    expect(peak).toBeLessThanOrEqual(20);
    await Promise.all(procs.map((p) => p.stop()));
  });

  it('refuses CAIRN_DB_POOL_MAX at start-up, naming what to set instead', async () => {
    const refused = await spawnWeb(h.config.DATABASE_URL, { CAIRN_DB_POOL_MAX: '5' }).catch((err: Error) => err);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/exited with code 1/);
    expect((refused as Error).message).toMatch(/CAIRN_DB_POOL_MAX was replaced by CAIRN_DB_MAX_CONNECTIONS/);
  });
});

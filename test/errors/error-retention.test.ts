// Retention of stored events (docs/api.md "Retention"): each environment's error_settings over HTTP,
// and the prune that drops whole day partitions no environment needs, deletes the rows of an
// environment with a shorter retention, and deletes the groups left without events, from the
// daily job's code and from `cairn admin errors prune`.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import { pruneErrors } from '../../src/domain/errors/retention/prune.ts';
import { listPartitions, putErrorSettings } from '../../src/domain/errors/retention/queries.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { queues } from '../../src/queues.ts';
import type { WebHandle } from '../../src/server.ts';
import { startWorker } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { eventually } from '../support/probes.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';

const exec = promisify(execFile);
const day = 86_400_000;
let h: Harness;
let web: WebHandle;
let a: CreatedEnv;
let b: CreatedEnv;
const settingsPath = (e: CreatedEnv) => `/v1/${e.env.name}/error_settings`;

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  a = await createTestEnv(h.db);
  b = await createTestEnv(h.db);
  // Day partitions back 120 days, as a service running that long has.
  await h.db.raw("select cairn_error_event_partitions((now() at time zone 'UTC')::date - 120, 121)");
});

/** A group of `env` with one event per age (days before now); the group untouched for 200 days. */
async function group(env: CreatedEnv, ages: number[]): Promise<string> {
  const id = newId('eg');
  const old = new Date(Date.now() - 200 * day);
  await h.db('error_groups').insert({
    id,
    env_id: env.env.id,
    fingerprint: id,
    title: 'Error: x',
    etag: 'e1',
    first_seen_time: old,
    last_seen_time: old,
    occurrence_count: ages.length,
    update_time: old,
  });
  for (const age of ages) {
    const at = new Date(Date.now() - age * day);
    await h.db('error_events').insert({
      uid: newId('err_c0').replace('err_c0_', 'err_c0'),
      env_id: env.env.id,
      group_id: id,
      event_time: at,
      receive_time: at,
      body_deflated: Buffer.from('x'),
    });
  }
  return id;
}

const events = async (groupId: string) =>
  Number((await h.db('error_events').where({ group_id: groupId }).count({ n: '*' }).first())!.n);
const exists = async (groupId: string) => (await h.db('error_groups').where({ id: groupId }).first()) !== undefined;

describe('error settings', () => {
  it('answer the defaults until changed, and change only what a PUT sends', async () => {
    const got = await call(web.url, 'GET', settingsPath(a), { key: a.secretKey });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ name: `${a.env.name}/error_settings`, retention_days: 90, max_pending: 100_000 });
    const put = await call(web.url, 'PUT', settingsPath(b), { key: b.secretKey, body: { retention_days: 7 } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ retention_days: 7, max_pending: 100_000, update_time: expect.any(String) });
    expect((await call(web.url, 'GET', settingsPath(b), { key: b.secretKey })).body).toMatchObject({
      retention_days: 7,
    });
  });

  it('refuse values out of range with invalid_request, and keep what was stored', async () => {
    for (const body of [
      { retention_days: 0 },
      { retention_days: 401 },
      { retention_days: 1.5 },
      { max_pending: 999 },
      { max_pending: 10_000_001 },
      { retention_days: '7' },
      { other: 1 },
    ]) {
      const res = await call(web.url, 'PUT', settingsPath(b), { key: b.secretKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request' });
    }
    expect((await call(web.url, 'GET', settingsPath(b), { key: b.secretKey })).body).toMatchObject({
      retention_days: 7,
      max_pending: 100_000,
    });
  });
});

describe('the prune', () => {
  it('drops days no environment keeps, deletes what a shorter retention ended, and groups left empty', async () => {
    await putErrorSettings(h.db, b.env.id, { retention_days: 7, max_pending: 100_000 });
    const aMixed = await group(a, [100, 100, 1]);
    const aOld = await group(a, [100]);
    const bMixed = await group(b, [10, 2]);
    const bOld = await group(b, [10]);
    // A group with no events that a store touched just now (it is getting its first events): kept.
    const fresh = newId('eg');
    await h.db('error_groups').insert({
      id: fresh,
      env_id: a.env.id,
      fingerprint: fresh,
      title: 'Error: new',
      etag: 'e1',
      first_seen_time: new Date(),
      last_seen_time: new Date(),
    });
    const oldDay = new Date(Date.now() - 100 * day).toISOString().slice(0, 10).replace(/-/g, '');
    const partitions = async () => (await listPartitions(h.db)).map((p) => p.name);
    expect(await partitions()).toContain(`error_events_${oldDay}`);

    const result = await pruneErrors(h.db, new Date());

    expect(result).toEqual({ deleted_events: 5, deleted_groups: 2 });
    // The day 100 days ago is past every environment's retention: its partition went whole.
    expect(await partitions()).not.toContain(`error_events_${oldDay}`);
    expect([await events(aMixed), await events(bMixed)]).toEqual([1, 1]);
    expect([await exists(aOld), await exists(bOld)]).toEqual([false, false]);
    expect([await exists(aMixed), await exists(bMixed), await exists(fresh)]).toEqual([true, true, true]);
    // A group's count is its lifetime's, as Sentry's "times seen".
    expect(await h.db('error_groups').where({ id: aMixed }).first()).toMatchObject({ occurrence_count: '3' });
    // Partitions stay ahead of today.
    const ahead = new Date(Date.now() + 14 * day).toISOString().slice(0, 10).replace(/-/g, '');
    expect(await partitions()).toContain(`error_events_${ahead}`);
    // Nothing more to do: a second run deletes nothing.
    expect(await pruneErrors(h.db, new Date())).toEqual({ deleted_events: 0, deleted_groups: 0 });
  });

  it('runs on demand: cairn admin errors prune --env --older-than --json', async () => {
    const g = await group(b, [3, 0.5]);
    const run = async (...args: string[]) =>
      exec(process.execPath, ['bin/cairn.js', 'admin', 'errors', 'prune', ...args], {
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: h.config.DATABASE_URL },
      });
    const out = await run('--env', b.env.name, '--older-than', '1d', '--json');
    const printed = JSON.parse(out.stdout) as Record<string, number>;
    expect(printed.deleted_events).toBeGreaterThanOrEqual(1);
    expect(printed).toHaveProperty('deleted_groups');
    expect(await events(g)).toBe(1);
    await expect(run('--older-than', 'soon')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('--older-than takes a number and a unit'),
    });
  });

  it('a worker that meets a day without its partition makes it, and the retried batch is stored', async () => {
    const today = `error_events_${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`;
    await h.db.raw(`alter table error_events detach partition ${today}`);
    await h.db.raw(`drop table ${today}`);
    const res = await call<{ uid: string }>(web.url, 'POST', `/v1/${a.env.name}/error_groups:capture`, {
      key: a.secretKey,
      body: { error_event: { event_time: new Date().toISOString(), exception_type: 'Error', message: 'no day' } },
    });
    expect(res.status).toBe(202);
    const worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
    try {
      await eventually(async () => (await h.db('error_events').where({ uid: res.body.uid }).first()) !== undefined, {
        timeoutMs: 30_000,
      });
      expect((await listPartitions(h.db)).map((p) => p.name)).toContain(today);
    } finally {
      await worker.stop();
    }
  });
});

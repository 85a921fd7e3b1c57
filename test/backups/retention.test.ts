// Schedules and retention: one backup per environment per cron slot, and pruning that
// removes exactly what expired (object and row), nothing else.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneExpired } from '../../src/domain/backups/schedule/prune.ts';
import { scheduleSlot, slotOf } from '../../src/domain/backups/schedule/slots.ts';
import { saveSettings } from '../../src/domain/backups/schedule/settings.ts';
import { createBoss, Jobs } from '../../src/jobs/index.ts';
import { queues } from '../../src/queues.ts';

import { createLogger } from '../../src/log.ts';
import { newId } from '../../src/ids.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import type { ObjectStore } from '../../src/storage/object-store.ts';
import type { PgBoss } from 'pg-boss';
import { createHarness, sqlNumber, createTestEnv, type Harness } from '../support/harness.ts';
import { setEnvDatabase, idleJobs } from './support.ts';

let h: Harness;
let store: ObjectStore;
let boss: PgBoss;
const bucket = `cairn-bk-${randomBytes(5).toString('hex')}`;
const deps = () => ({
  config: h.config,
  db: h.db,
  store,
  log: createLogger({ name: 'test', level: 'silent' }),
  jobs: idleJobs(h.config),
});

beforeAll(async () => {
  h = await createHarness({ CAIRN_BACKUP_BUCKET: bucket });
  store = createObjectStore(h.config);
  await store.ensureBucket(bucket);
  boss = createBoss(h.config, 'web');
  await boss.start();
});

afterAll(async () => {
  await boss?.stop({ graceful: false, close: true });
  await store?.deleteBucket(bucket).catch(() => undefined);
  await h?.close();
});

describe('retention', () => {
  it('removes exactly the expired backups, objects first', async () => {
    const env = await createTestEnv(h.db);
    const now = new Date('2026-11-21T12:00:00Z');
    const rows = [
      ['daily', 'succeeded', -1],
      ['daily', 'succeeded', +1],
      ['weekly', 'succeeded', -3600],
      ['monthly', 'succeeded', +86_400],
      ['manual', 'succeeded', 0],
      ['manual', 'failed', -5],
      ['manual', 'running', -10],
      ['manual', 'pending', -10],
    ] as const;
    const inserted = [];
    for (const [type, state, offsetSeconds] of rows) {
      const id = newId('backup');
      const key = `backups/db/p/${env.env.id}/${id}.sql.gz`;
      if (state === 'succeeded') await store.put(bucket, key, `dump of ${id}`);
      await h.db('backups').insert({
        id,
        env_id: env.env.id,
        type,
        trigger: type === 'manual' ? 'manual' : 'schedule',
        slot: type === 'manual' ? null : id,
        state,
        bucket,
        object_key: key,
        expire_time: new Date(now.getTime() + offsetSeconds * 1000),
      });
      inserted.push({ id, key, state, offsetSeconds });
    }
    const expired = inserted.filter((r) => r.offsetSeconds <= 0 && (r.state === 'succeeded' || r.state === 'failed'));
    const removed = await pruneExpired(deps(), now);
    expect(removed.sort()).toEqual(expired.map((r) => r.id).sort());
    const left = (await h.db('backups').where({ env_id: env.env.id }).select('id')).map((r) => r.id).sort();
    expect(left).toEqual(
      inserted
        .filter((r) => !expired.includes(r))
        .map((r) => r.id)
        .sort(),
    );
    for (const r of inserted.filter((x) => x.state === 'succeeded')) {
      expect((await store.head(bucket, r.key)) === undefined).toBe(expired.includes(r));
    }
    expect(await pruneExpired(deps(), now)).toEqual([]);
  });

  it('applies changed retention to backups already taken', async () => {
    const env = await createTestEnv(h.db);
    const finish = new Date('2026-11-01T03:05:00Z');
    const id = newId('backup');
    await h.db('backups').insert({
      id,
      env_id: env.env.id,
      type: 'daily',
      trigger: 'schedule',
      slot: '2026-11-01',
      state: 'succeeded',
      bucket,
      object_key: `x/${id}`,
      finish_time: finish,
      expire_time: new Date(finish.getTime() + 7 * 86_400_000),
    });
    await saveSettings(h.db, env.env.id, {
      schedule_enabled: true,
      retention_days: { daily: 3, weekly: 30, monthly: 90, manual: 90 },
    });
    const row = await h.db('backups').where({ id }).first();
    expect(row.expire_time.toISOString()).toBe('2026-11-04T03:05:00.000Z');
  });
});

describe('schedules', () => {
  it('creates one backup per environment per slot, however often the slot fires', async () => {
    const withDb = await createTestEnv(h.db);
    const paused = await createTestEnv(h.db);
    const noDb = await createTestEnv(h.db);
    await setEnvDatabase(h.db, h.config, withDb.env.id, 'postgres://127.0.0.1/none');
    await setEnvDatabase(h.db, h.config, paused.env.id, 'postgres://127.0.0.1/none');
    await saveSettings(h.db, paused.env.id, {
      schedule_enabled: false,
      retention_days: { daily: 7, weekly: 30, monthly: 90, manual: 90 },
    });
    const jobs = new Jobs(boss, queues);
    const at = new Date('2026-11-22T03:00:00Z');

    await Promise.all([scheduleSlot(deps(), jobs, 'weekly', at), scheduleSlot(deps(), jobs, 'weekly', at)]);
    await scheduleSlot(deps(), jobs, 'weekly', new Date(at.getTime() + 60_000));
    const envIds = [withDb.env.id, paused.env.id, noDb.env.id];
    const weekly = await h.db('backups').whereIn('env_id', envIds).where({ type: 'weekly' }).select();
    expect(weekly).toHaveLength(1);
    expect(weekly[0]).toMatchObject({
      env_id: withDb.env.id,
      slot: slotOf(at),
      trigger: 'schedule',
      billable: false,
      state: 'pending',
    });
    expect(weekly[0].expire_time.toISOString()).toBe('2026-12-22T03:00:00.000Z');
    expect(weekly[0].object_key).toBe(
      `backups/db/${withDb.env.project_id}/${withDb.env.id}/2026-11-22T03:00:00.000Z.sql.gz`,
    );

    await scheduleSlot(deps(), jobs, 'daily', at);
    await scheduleSlot(deps(), jobs, 'daily', new Date('2026-11-23T03:00:00Z'));
    expect(await h.db('backups').whereIn('env_id', envIds).where({ type: 'daily' }).count('* as n').first()).toEqual({
      n: '2',
    });
    expect(await sqlNumber(h.db, "select count(*) from pgboss.job where name = 'backups.capture'")).toBe(3);
  });

  it('backs an environment up at its own hour (UTC), 03:00 by default', async () => {
    const early = await createTestEnv(h.db);
    const usual = await createTestEnv(h.db);
    for (const e of [early, usual]) await setEnvDatabase(h.db, h.config, e.env.id, 'postgres://127.0.0.1/none');
    await saveSettings(h.db, early.env.id, {
      schedule_enabled: true,
      schedule_hour_utc: 2,
      retention_days: { daily: 7, weekly: 30, monthly: 90, manual: 90 },
    });
    const jobs = new Jobs(boss, queues);
    const ids = [early.env.id, usual.env.id];
    const daily = async () =>
      (await h.db('backups').whereIn('env_id', ids).where({ type: 'daily' }).select('env_id')).map((b) => b.env_id);
    await scheduleSlot(deps(), jobs, 'daily', new Date('2026-12-01T02:00:00Z'));
    expect(await daily()).toEqual([early.env.id]);
    await scheduleSlot(deps(), jobs, 'daily', new Date('2026-12-01T03:00:00Z'));
    expect((await daily()).sort()).toEqual([...ids].sort());
    // Later hours take no one twice.
    await scheduleSlot(deps(), jobs, 'daily', new Date('2026-12-01T04:00:00Z'));
    expect(await daily()).toHaveLength(2);
    // A slot that ran late (no worker at 02:00 and 03:00) still backs up the hours it missed.
    await scheduleSlot(deps(), jobs, 'daily', new Date('2026-12-02T05:00:00Z'));
    expect(
      await h.db('backups').whereIn('env_id', ids).where({ type: 'daily', slot: '2026-12-02' }).count('* as n').first(),
    ).toEqual({ n: '2' });
    // Before an environment's hour, it waits.
    await scheduleSlot(deps(), jobs, 'daily', new Date('2026-12-03T02:00:00Z'));
    expect(
      (await h.db('backups').whereIn('env_id', ids).where({ type: 'daily', slot: '2026-12-03' }).select('env_id')).map(
        (b) => b.env_id,
      ),
    ).toEqual([early.env.id]);
  });

  it('registers hourly cron slots in UTC, each taking the environments whose hour it is', async () => {
    const { schedules } = await import('../../src/queues.ts');
    const mine = schedules.filter((s) => s.queue === 'backups.schedule').map((s) => [s.key, s.cron, s.data]);
    expect(mine).toEqual([
      ['daily', '0 * * * *', { type: 'daily' }],
      ['weekly', '0 * * * 0', { type: 'weekly' }],
      ['monthly', '0 * 1 * *', { type: 'monthly' }],
    ]);
  });
});

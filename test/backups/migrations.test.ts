// The backup verification migration (20261124100000_…) goes down and up again on a database that
// holds a drill and a verified backup: down removes what the old schema cannot hold, up restores
// the columns and the constraint.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';

const migration = { name: '20261124100000_backup_verification.ts' };
let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

it('goes down and up again with drills and verdicts stored', async () => {
  const env = await createTestEnv(h.db);
  const backup = newId('backup');
  await h.db('backups').insert({
    id: backup,
    env_id: env.env.id,
    type: 'manual',
    trigger: 'manual',
    state: 'succeeded',
    bucket: 'b',
    object_key: 'k',
    expire_time: new Date(Date.now() + 86_400_000),
    sql_bytes: 10,
    sql_sha256: 'x',
    verification: JSON.stringify({ result: 'passed' }),
  });
  await h.db('backup_operations').insert([
    {
      id: newId('op'),
      kind: 'drill',
      requester_env_id: env.env.id,
      env_id: env.env.id,
      backup_id: backup,
      state: 'succeeded',
    },
    {
      id: newId('op'),
      kind: 'restore',
      requester_env_id: env.env.id,
      env_id: env.env.id,
      backup_id: backup,
      state: 'succeeded',
    },
  ]);

  await h.db.migrate.down(migration);
  expect(await h.db('backup_operations').pluck('kind')).toEqual(['restore']);
  expect(await h.db.schema.hasColumn('backups', 'verification')).toBe(false);
  await expect(
    h
      .db('backup_operations')
      .insert({ id: newId('op'), kind: 'drill', requester_env_id: env.env.id, env_id: env.env.id }),
  ).rejects.toThrow(/kind_check/);

  await h.db.migrate.up(migration);
  expect(await h.db.schema.hasColumn('backups', 'verification')).toBe(true);
  expect(await h.db.schema.hasColumn('backup_settings', 'drill_schedule')).toBe(true);
  await h
    .db('backup_operations')
    .insert({ id: newId('op'), kind: 'drill', requester_env_id: env.env.id, env_id: env.env.id });
  await expect(h.db('backup_settings').insert({ env_id: env.env.id, drill_schedule: 'hourly' })).rejects.toThrow(
    /drill_schedule_check/,
  );
});

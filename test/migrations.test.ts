// The migrations: one per area, each the stored form the code reads, never importing from src/ (a
// migration must do the same thing whenever it runs), and the whole set goes down and up again.
import { readdir, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../src/ids.ts';
import { createHarness, createTestEnv, type Harness } from './support/harness.ts';

const dir = new URL('../migrations/', import.meta.url);
let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

it('never import live code', async () => {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.ts'));
  expect(files.length).toBeGreaterThanOrEqual(5);
  for (const file of files) {
    const text = await readFile(new URL(file, dir), 'utf8');
    const imports = [...text.matchAll(/^import .* from '([^']+)'/gm)].map((m) => m[1]);
    expect(
      imports.filter((i) => i!.startsWith('.')),
      file,
    ).toEqual([]);
  }
});

it('go down to nothing and up again, with the constraints the code relies on', async () => {
  await h.db.migrate.rollback(undefined, true);
  expect(await h.db.schema.hasTable('backups')).toBe(false);
  expect(await h.db.schema.hasTable('envs')).toBe(false);
  await h.db.migrate.latest();

  const env = await createTestEnv(h.db);
  const op = (kind: string) => ({ id: newId('op'), kind, requester_env_id: env.env.id, env_id: env.env.id });
  await h.db('backup_operations').insert([op('restore'), op('drill')]);
  await expect(h.db('backup_operations').insert(op('vacuum'))).rejects.toThrow(/kind_check/);
  await expect(h.db('backup_settings').insert({ env_id: env.env.id, drill_schedule: 'hourly' })).rejects.toThrow(
    /drill_schedule_check/,
  );
  // Mail bodies are stored sealed only; lockouts count reserved checks.
  const outbox = Object.keys(await h.db('mail_outbox').columnInfo());
  expect(outbox).toContain('body_sealed');
  expect(outbox).not.toContain('text');
  expect(Object.keys(await h.db('identity_lockouts').columnInfo())).toContain('checks');
  expect(Object.keys(await h.db('backups').columnInfo())).toEqual(
    expect.arrayContaining(['sql_bytes', 'sql_sha256', 'table_stats', 'verification', 'interruptions']),
  );
});

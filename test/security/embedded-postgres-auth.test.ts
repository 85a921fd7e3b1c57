// `npm start`'s embedded Postgres is no open door to the other processes of the machine: its
// superuser password is random, made at the first start and kept in .data/postgres-password
// (0600), not the well-known `postgres`; every pg_hba rule asks for SCRAM-SHA-256 (no `trust`, no
// cleartext `password`); and a cluster made by an older version, with the fixed password and
// cleartext rules, is moved onto a kept password at its next start, its data kept.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, readlink, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { call } from '../support/harness.ts';
import { freePort } from '../support/own-postgres.ts';

const script = new URL('../../src/start.ts', import.meta.url).pathname;
let dir: string | undefined;
let linked: string | undefined;
let running: Started | undefined;

afterAll(async () => {
  if (running) await running.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (linked) await rm(dirname(linked), { recursive: true, force: true });
});

interface Started {
  child: ChildProcessWithoutNullStreams;
  out: () => string;
  env: string;
  secret: string;
  stop(): Promise<void>;
}

/** `npm start` in `cwd`, once its banner shows the demo environment's secret key. */
async function start(cwd: string, port: number, pgPort: number): Promise<Started> {
  const child = spawn(process.execPath, [script], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: cwd,
      PORT: String(port),
      CAIRN_EMBEDDED_PG_PORT: String(pgPort),
      LOG_LEVEL: 'warn',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code, out).toBe(0);
  };
  const deadline = Date.now() + 150_000;
  while (!/secret key:\s+cairn_sk_test_\w+/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop().catch(() => undefined);
      throw new Error(`npm start did not come up:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    out: () => out,
    env: /environment:\s+(\S+)/.exec(out)![1]!,
    secret: /secret key:\s+(\S+)/.exec(out)![1]!,
    stop,
  };
}

/** Connects as the superuser; answers the client, or the SQLSTATE it was refused with. */
async function connect(pgPort: number, password: string): Promise<pg.Client | string> {
  const client = new pg.Client({ host: '127.0.0.1', port: pgPort, user: 'postgres', password, database: 'postgres' });
  try {
    await client.connect();
    return client;
  } catch (err) {
    await client.end().catch(() => undefined);
    return (err as { code?: string }).code ?? String(err);
  }
}

/** What a start must leave: the kept password only, SCRAM for every rule, the service up. */
async function expectLockedDown(cwd: string, port: number, pgPort: number, s: Started): Promise<string> {
  // The well-known password is refused (28P01: invalid_password).
  const legacy = await connect(pgPort, 'postgres');
  if (typeof legacy !== 'string') await legacy.end();
  expect(typeof legacy === 'string' ? legacy : 'connected with the password postgres').toBe('28P01');

  const file = join(cwd, '.data', 'postgres-password');
  const info = await stat(file);
  expect(info.mode & 0o777).toBe(0o600);
  expect(info.uid).toBe(process.getuid!());
  const password = (await readFile(file, 'utf8')).trim();
  expect(password).toMatch(/^[\w-]{32}$/);
  const admin = await connect(pgPort, password);
  if (typeof admin === 'string') throw new Error(`the kept password was refused: ${admin}`);
  try {
    const rules = await admin.query<{ type: string; auth_method: string; error: string | null }>(
      'select type, auth_method, error from pg_hba_file_rules',
    );
    expect(rules.rows.length).toBeGreaterThan(0);
    for (const rule of rules.rows) expect(rule).toMatchObject({ auth_method: 'scram-sha-256', error: null });
    expect(rules.rows.map((r) => r.type)).toEqual(expect.arrayContaining(['local', 'host']));
    const stored = await admin.query<{ scram: boolean; encryption: string }>(
      "select rolpassword like 'SCRAM-SHA-256$%' as scram, current_setting('password_encryption') as encryption from pg_authid where rolname = 'postgres'",
    );
    expect(stored.rows[0]).toEqual({ scram: true, encryption: 'scram-sha-256' });
  } finally {
    await admin.end();
  }

  const api = `http://127.0.0.1:${port}`;
  expect((await call(api, 'GET', '/healthz')).status).toBe(200);
  expect(await call(api, 'GET', `/v1/${s.env}`, { key: s.secret })).toMatchObject({ status: 200 });
  return password;
}

describe("npm start's embedded Postgres", () => {
  it('keeps a random superuser password in a 0600 file, asks SCRAM of every connection, and moves an older cluster onto it', async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-pgauth-'));
    const [port, pgPort] = [await freePort(), await freePort()];
    running = await start(dir, port, pgPort);
    linked = await readlink(join(dir, '.data', 'postgres')).catch(() => undefined);
    const first = await expectLockedDown(dir, port, pgPort, running);

    // Made as an older version left it: the fixed password, cleartext rules, no password file.
    const admin = await connect(pgPort, first);
    if (typeof admin === 'string') throw new Error(admin);
    const hbaFile = (await admin.query<{ hba_file: string }>('show hba_file')).rows[0]!.hba_file;
    await admin.query("alter role postgres password 'postgres'");
    await writeFile(
      hbaFile,
      [
        'local all all password',
        'host all all 127.0.0.1/32 password',
        'host all all ::1/128 password',
        'local replication all password',
        'host replication all 127.0.0.1/32 password',
        'host replication all ::1/128 password',
        '',
      ].join('\n'),
    );
    await admin.query('select pg_reload_conf()');
    await admin.end();
    await unlink(join(dir, '.data', 'postgres-password'));
    await running.stop();
    const before = running;
    running = await start(dir, port, pgPort);
    expect(running.out()).toContain('had the old fixed password');
    // The same cluster and its data: the demo environment made at the first start still answers.
    expect(running.env).toBe(before.env);
    const second = await expectLockedDown(dir, port, pgPort, running);
    expect(second).not.toBe(first);
    await running.stop();
    running = undefined;
  }, 400_000);
});

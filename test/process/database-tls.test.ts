// Cairn's own database over TLS, as on Heroku Postgres: a Postgres of the test's own that accepts
// only `hostssl` connections, with a self-signed certificate no CA vouches for. With app.json's
// PGSSLMODE the release phase migrates it and a web started as the Procfile starts it answers
// /readyz with every connection encrypted; without it, the release and the web each exit saying
// which variable to set, and against a server without TLS the opposite advice is given.
import { execFile } from 'node:child_process';
import { chmod, chown, readFile, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEncryptionKey } from '../support/config.ts';
import { startOwnPostgres, type OwnPostgres } from '../support/own-postgres.ts';
import { spawnWeb } from '../support/web-process.ts';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');

let tls: OwnPostgres;
let url: string;
let sslMode: string;

beforeAll(async () => {
  const app = JSON.parse(await readFile(join(root, 'app.json'), 'utf8')) as {
    env: Record<string, { value?: string }>;
  };
  sslMode = app.env.PGSSLMODE!.value!;
  tls = await startOwnPostgres({ flags: ['-c', 'ssl=on'], beforeStart: requireTls });
  const admin = new pg.Client({ connectionString: tls.url('postgres'), ssl: { rejectUnauthorized: false } });
  await admin.connect();
  await admin.query('create database cairn');
  await admin.end();
  url = tls.url('cairn');
}, 120_000);

afterAll(async () => {
  await tls?.close();
});

/** A self-signed certificate, and TCP only with TLS, as Heroku Postgres: a plain connection has no pg_hba line. */
async function requireTls(dir: string): Promise<void> {
  // Owned by whoever runs the server: Postgres refuses a key others can read.
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
  await writeFile(
    join(dir, 'pg_hba.conf'),
    'local all all trust\nhostssl all all 127.0.0.1/32 password\nhostnossl all all 0.0.0.0/0 reject\n',
  );
  for (const f of ['server.key', 'server.crt', 'pg_hba.conf']) await chown(join(dir, f), owner.uid, owner.gid);
  await chmod(join(dir, 'server.key'), 0o600);
}

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
  let plain: OwnPostgres;

  beforeAll(async () => {
    plain = await startOwnPostgres({ flags: ['-c', 'ssl=off'] });
  }, 120_000);

  afterAll(async () => {
    await plain?.close();
  });

  it('says to unset PGSSLMODE when it is set', async () => {
    let stderr = '';
    const r = await run(process.execPath, ['src/migrate.ts'], {
      cwd: root,
      env: { ...processEnv({ PGSSLMODE: 'require' }), DATABASE_URL: plain.url('postgres') },
    }).catch((err: { code: number; stderr: string }) => {
      stderr = err.stderr;
      return undefined;
    });
    expect(r).toBeUndefined();
    expect(stderr).toContain('unset PGSSLMODE');
  });
});

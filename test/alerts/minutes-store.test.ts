// Frequency rules' per-minute counts as the worker's store adds them (its own statement,
// src/domain/errors/intake/store-queries.ts), on the real Postgres: exactly the stored events,
// across parallel batches of one group, not an SDK's second copy of a named event, nothing again
// for a re-run of a batch, and none for an environment the store is not told keeps minutes.
import type { Knex } from 'knex';
import { fromKnex } from 'pg-boss';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { keyringFromConfig } from '../../src/crypto.ts';
import { createDb } from '../../src/db.ts';
import { ingestEvents, ingestDefaults, type IngestDeps, type JobEvent } from '../../src/domain/errors/intake/ingest.ts';
import { createPipelineCaches } from '../../src/domain/errors/pipeline/caches.ts';
import { createHarness, createTestEnv, sqlNumber, type Harness } from '../support/harness.ts';
import { fetchedSdkEvent, sdkEvent } from '../errors/facets-support.ts';

let h: Harness;
let deps: IngestDeps;
let txPool: Knex;

beforeAll(async () => {
  h = await createHarness();
  deps = {
    db: h.db,
    keyring: keyringFromConfig(h.config),
    load: () => Promise.reject(new Error('no maps in this test')),
    caches: createPipelineCaches(),
  };
  txPool = createDb(h.config, { poolMax: 8 });
});
afterAll(async () => {
  await txPool?.destroy();
  await h?.close();
});

const storeOnce = (rows: JobEvent[], minuteEnvs: string[]) =>
  txPool.transaction((trx) => ingestEvents(deps, fromKnex(trx), rows, { ...ingestDefaults, minuteEnvs }));

const minutesOf = (envId: string) =>
  sqlNumber(h.db, `select coalesce(sum(count), 0) from alert_group_minutes where env_id = ?`, [envId]);

it('counts each stored event of a group once, across parallel batches, and a re-run adds nothing', async () => {
  const env = await createTestEnv(h.db);
  const batches = Array.from({ length: 4 }, () =>
    Array.from({ length: 10 }, () => fetchedSdkEvent(deps.keyring, env.env.id, sdkEvent('MinuteRace'))),
  );
  // An SDK's retry of a named event, in the same batch under another uid: stored (and counted) once.
  const named = sdkEvent('MinuteRace');
  batches[0]!.push(fetchedSdkEvent(deps.keyring, env.env.id, named), fetchedSdkEvent(deps.keyring, env.env.id, named));
  const results = await Promise.all(batches.map((rows) => storeOnce(rows, [env.env.id])));
  expect(results.reduce((n, r) => n + r.stored, 0)).toBe(41);
  const groups = new Set(results.flatMap((r) => r.minuteGroups));
  expect(groups.size).toBe(1);
  expect(await minutesOf(env.env.id)).toBe(41);
  expect(await sqlNumber(h.db, `select occurrence_count from error_groups where id = ?`, [[...groups][0]!])).toBe(41);

  const again = await storeOnce(batches[1]!, [env.env.id]);
  expect(again).toMatchObject({ stored: 0, minuteGroups: [] });
  expect(await minutesOf(env.env.id)).toBe(41);
});

it('keeps no minutes for an environment the store is not told keeps them', async () => {
  const env = await createTestEnv(h.db);
  const other = await createTestEnv(h.db);
  const rows = [
    fetchedSdkEvent(deps.keyring, env.env.id, sdkEvent('MinuteNone')),
    fetchedSdkEvent(deps.keyring, other.env.id, sdkEvent('MinuteNone')),
  ];
  const r = await storeOnce(rows, [other.env.id]);
  expect(r.stored).toBe(2);
  expect(r.minuteGroups).toHaveLength(1);
  expect(await minutesOf(env.env.id)).toBe(0);
  expect(await minutesOf(other.env.id)).toBe(1);
});

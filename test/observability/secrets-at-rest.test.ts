// The house rule "no plaintext password, token or key in any table, queue row or log line"
// for captured events, which carry secrets until a worker scrubs them: accepted events (no worker
// running), dead-lettered ones, and the end state after processing all leave none in a dump of the
// whole database; a sealed payload moved to another row does not open there, and its event is
// buried instead of stored under the wrong uid.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyringFromConfig } from '../../src/crypto.ts';
import { unpackBody } from '../../src/domain/observability/pipeline/event-body.ts';
import { ingestBatch, ingestNext, type IngestDeps } from '../../src/domain/observability/intake/ingest.ts';
import { ingestQueries } from '../../src/domain/observability/intake/queries.ts';
import { isCardNumber } from '../../src/domain/observability/scrubbing/rules.ts';
import { compiledPolicy, defaultPolicy } from '../../src/domain/observability/scrubbing/scrub.ts';
import { openPayload } from '../../src/domain/observability/intake/sealed-payload.ts';
import type { MapLoader } from '../../src/domain/observability/pipeline/symbolicate.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { startWeb, type WebHandle } from '../../src/server.ts';
import { call, createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { dumpDatabase } from '../support/pg.ts';
import { capture, envBase, sampleEvent } from './support.ts';

// Each secret the default policy knows, and the exact text that must appear nowhere.
const secrets = {
  jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyXzQyIiwicm9sZSI6ImFkbWluIn0.Xk3mQ9pL2vR8tY7wZ1aB4cD6eF0gH5jK',
  urlPassword: 'Sup3rS3cretPlantedPw',
  awsKey: 'AKIAZQ7PLANTEDKEY42X',
  cairnKey: 'cairn_sk_live_Pl4nt3dS3cr3tK3yF0rT3st1ngAtRest99',
  card: '4539148803436467',
};
const planted = Object.values(secrets);

/** An event carrying every secret, in the places captures put them. */
const secretEvent = (tag: string) =>
  sampleEvent({
    message: `login failed for token ${secrets.jwt} (${tag})`,
    stack: [
      `Error: cannot connect to postgres://app:${secrets.urlPassword}@db.internal:5432/app`,
      '    at connect (/srv/app/src/db.js:10:15)',
    ].join('\n'),
    tags: { aws: secrets.awsKey, run: tag },
    breadcrumbs: [
      { message: `charged card ${secrets.card}`, category: 'billing' },
      { message: 'key in use', data: { key: secrets.cairnKey } },
    ],
  });

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let deps: IngestDeps;
// Every log line of the web process, at the most verbose level.
let logs = '';
const log = pino({ level: 'trace' }, { write: (line: string) => void (logs += line) });
const noMaps: MapLoader = () => Promise.reject(new Error('no maps in this test'));

beforeAll(async () => {
  h = await createHarness();
  // The web process only: nothing processes (and so nothing scrubs) what it accepts.
  web = await startWeb(h.config, { log, host: '127.0.0.1', port: 0 });
  env = await createTestEnv(h.db);
  deps = { db: h.db, keyring: keyringFromConfig(h.config), load: noMaps };
});
afterAll(async () => {
  await web?.stop();
  await h?.close();
});

async function expectNoSecretAnywhere(): Promise<string> {
  const dump = await dumpDatabase(h.db);
  expect(dump.schemas).toContain('pgboss');
  for (const secret of planted) {
    expect(dump.text).not.toContain(secret);
    expect(dump.text.toLowerCase()).not.toContain(Buffer.from(secret).toString('hex'));
    expect(logs).not.toContain(secret);
  }
  return dump.text;
}

describe('captured secrets at rest', () => {
  it('are secrets the default policy finds (the premise of these tests)', () => {
    const scrubber = compiledPolicy(defaultPolicy).scrubber();
    expect(isCardNumber(secrets.card)).toBe(true);
    const text = JSON.stringify(secretEvent('premise'));
    const scrubbed = scrubber.text(text);
    for (const secret of planted) expect(scrubbed).not.toContain(secret);
  });

  it('appear in no table of any schema, nor in the log, while the events wait in the inbox', async () => {
    const single = await capture(web, env, secretEvent('single'));
    const batch = await call<{ results: { uid: string }[] }>(
      web.url,
      'POST',
      `${envBase(env)}/error_groups:batchCapture`,
      { key: env.secretKey, body: { error_events: [secretEvent('batch 1'), secretEvent('batch 2')] } },
    );
    expect(batch.status).toBe(202);
    const uids = [single, ...batch.body.results.map((r) => r.uid)];
    const inbox = await h.db('error_event_inbox').whereIn('uid', uids).select('uid', 'release', 'payload_sealed');
    expect(inbox).toHaveLength(3);
    const dump = await expectNoSecretAnywhere();
    for (const uid of uids) expect(dump).toContain(uid);
    expect(dump).not.toContain('login failed');

    // Sealed, not lost: the worker opens each payload, scrubs it and stores it; still nothing leaks.
    const opened = inbox.map((row) => openPayload(deps.keyring, { ...row, env_id: env.env.id }));
    expect(opened[0]!.breadcrumbs![0]!.message).toContain(secrets.card);
    expect((await ingestBatch(deps, uids)).stored).toBe(3);
    expect(await h.db('error_event_inbox').whereIn('uid', uids).count({ n: '*' }).first()).toEqual({ n: '0' });
    const stored = await h.db('error_events').whereIn('uid', uids).select('body_deflated');
    expect(stored.every((r) => r.body_deflated instanceof Buffer)).toBe(true);
    expect(JSON.stringify(stored.map((r) => unpackBody(r.body_deflated)))).toContain('[Filtered]');
    // The dump reads the deflated bodies as text: the scrubbed messages are there, the secrets not.
    expect(await expectNoSecretAnywhere()).toContain('login failed');
  });

  it('appear nowhere once their event is dead-lettered, and the dead letter still opens', async () => {
    const uid = await capture(web, env, secretEvent('dead'));
    // Its worker dies during every attempt (the claims run out unprocessed): it is buried as it is.
    for (let i = 0; i < 3; i++) {
      const claimed = await ingestQueries(h.db).claim(1000, 30);
      expect(claimed.map((r) => r.uid)).toContain(uid);
      await h
        .db('error_event_inbox')
        .where({ uid })
        .update({ lease_until: h.db.raw('now()') });
    }
    await ingestNext(deps, 1000, 30, { maxAttempts: 2 });
    const dead = await h
      .db('error_event_dead')
      .where({ uid })
      .first('uid', 'env_id', 'release', 'payload_sealed', 'last_error');
    expect(dead).toMatchObject({ last_error: expect.stringMatching(/gave up/) });
    expect(await h.db('error_event_inbox').where({ uid }).first()).toBeUndefined();
    await expectNoSecretAnywhere();
    // An operator (or a re-drive) can still read it with the service key.
    expect(openPayload(deps.keyring, dead).message).toContain(secrets.jwt);
  });
});

describe('a sealed payload on another row', () => {
  it('does not open there: the event is buried at once, and nothing is stored under the wrong uid', async () => {
    const other = await createTestEnv(h.db);
    const source = await capture(web, env, sampleEvent({ message: 'the original' }));
    const copied = await capture(web, env, sampleEvent({ message: 'overwritten' }));
    const crossEnv = await capture(web, other, sampleEvent({ message: 'other environment' }));
    const relabelled = await capture(web, env, sampleEvent({ message: 'relabelled', release: 'r-1' }));
    const { payload_sealed: sealed } = await h.db('error_event_inbox').where({ uid: source }).first('payload_sealed');
    await h.db('error_event_inbox').whereIn('uid', [copied, crossEnv]).update({ payload_sealed: sealed });
    // The plain release column picks source maps: changing it must not go unnoticed either.
    await h.db('error_event_inbox').where({ uid: relabelled }).update({ release: 'r-2' });

    const r = await ingestNext(deps, 1000, 30, { maxAttempts: 10 });
    expect(r.failed.map((f) => f.uid).sort()).toEqual([copied, crossEnv, relabelled].sort());
    expect(await h.db('error_events').where({ uid: source }).first('uid')).toEqual({ uid: source });
    expect(await h.db('error_events').whereIn('uid', [copied, crossEnv, relabelled]).count({ n: '*' }).first()).toEqual(
      { n: '0' },
    );
    // Buried on the first attempt (no retry can make it open), sealed value and all.
    const dead = await h
      .db('error_event_dead')
      .whereIn('uid', [copied, crossEnv, relabelled])
      .select('uid', 'attempts', 'last_error', 'payload_sealed');
    expect(dead).toHaveLength(3);
    for (const d of dead)
      expect(d).toMatchObject({ attempts: 1, last_error: expect.stringMatching(/does not belong to this row/) });
    expect(dead.find((d) => d.uid === copied)!.payload_sealed).toBe(sealed);
    expect(
      await h.db('error_event_inbox').whereIn('uid', [copied, crossEnv, relabelled]).count({ n: '*' }).first(),
    ).toEqual({ n: '0' });
  });

  it('whose key is not loaded is retried, not buried: the operator can still add the old key', async () => {
    const uid = await capture(web, env, sampleEvent({ message: 'rotated away' }));
    const rotated = { ...deps, keyring: { currentId: 'k9', keys: new Map([['k9', Buffer.alloc(32, 9)]]) } };
    const r = await ingestNext(rotated, 1000, 30, { maxAttempts: 10 });
    expect(r.failed.map((f) => f.uid)).toEqual([uid]);
    expect(await h.db('error_event_inbox').where({ uid }).first('attempts', 'last_error')).toMatchObject({
      attempts: 1,
      last_error: expect.stringMatching(/CAIRN_ENCRYPTION_OLD_KEYS/),
    });
    await h
      .db('error_event_inbox')
      .where({ uid })
      .update({ lease_until: h.db.raw('now()') });
    expect((await ingestNext(deps, 1000, 30)).stored).toBe(1);
  });
});

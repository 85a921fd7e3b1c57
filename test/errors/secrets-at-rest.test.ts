// The house rule "no plaintext password, token or key in any table, queue row or log line"
// for captured events, which carry secrets until a worker scrubs them: accepted events (no worker
// running), dead-lettered ones, and the end state after processing all leave none in a dump of the
// whole database, pg-boss's job table included; a sealed payload moved to another event does not
// open there, and its event is dead-lettered instead of stored under the wrong uid.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyringFromConfig } from '../../src/crypto.ts';
import { unpackBody } from '../../src/domain/errors/pipeline/event-codec.ts';
import { isCardNumber } from '../../src/domain/errors/scrubbing/rules.ts';
import { createScrubber, defaultPolicy } from '../../src/domain/errors/scrubbing/scrub.ts';
import { openPayload } from '../../src/domain/errors/intake/sealed-payload.ts';
import type { Keyring } from '../../src/crypto.ts';
import type { AppJobs as Jobs } from '../../src/queues.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { dumpDatabase } from '../support/pg.ts';
import { eventually } from '../support/probes.ts';
import { capture, deadLetters, envBase, ingestQueued, queuedEvents, sampleEvent, testJobs } from './support.ts';

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
let keyring: Keyring;
let jobs: Jobs;
// Every log line of the web process, at the most verbose level.
let logs = '';
const log = pino({ level: 'trace' }, { write: (line: string) => void (logs += line) });

const stack = useWeb({ log });
beforeAll(async () => {
  ({ h, web } = stack);
  // The web process only: nothing processes (and so nothing scrubs) what it accepts.
  env = await createTestEnv(h.db);
  keyring = keyringFromConfig(h.config);
  jobs = await testJobs(h);
  // This file's database only: two attempts, a second apart, so dead letters show in seconds.
  await jobs.boss.updateQueue('errors.ingest', { retryLimit: 1, retryDelay: 1, retryBackoff: false });
});
afterAll(async () => {
  await jobs?.boss.stop({ graceful: false, close: true });
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
    const scrubber = createScrubber(defaultPolicy);
    expect(isCardNumber(secrets.card)).toBe(true);
    const text = JSON.stringify(secretEvent('premise'));
    const scrubbed = scrubber.text(text);
    for (const secret of planted) expect(scrubbed).not.toContain(secret);
  });

  it('appear in no table of any schema, nor in the log, while the events wait in the queue', async () => {
    const single = await capture(web, env, secretEvent('single'));
    const batch = await call<{ results: { uid: string }[] }>(
      web.url,
      'POST',
      `${envBase(env)}/error_groups:batchCapture`,
      { key: env.secretKey, body: { error_events: [secretEvent('batch 1'), secretEvent('batch 2')] } },
    );
    expect(batch.status).toBe(202);
    const uids = [single, ...batch.body.results.map((r) => r.uid)];
    const queued = (await queuedEvents(h)).filter((q) => uids.includes(q.uid));
    expect(queued).toHaveLength(3);
    const dump = await expectNoSecretAnywhere();
    for (const uid of uids) expect(dump).toContain(uid);
    expect(dump).not.toContain('login failed');

    // Sealed, not lost: the worker opens each payload, scrubs it and stores it; still nothing leaks.
    const opened = queued.map((row) => openPayload(keyring, row));
    expect(opened[0]!.breadcrumbs![0]!.message).toContain(secrets.card);
    expect(await ingestQueued(h, jobs)).toBe(2);
    expect(await queuedEvents(h)).toEqual([]);
    const stored = await h.db('error_events').whereIn('uid', uids).select('body_deflated');
    expect(stored).toHaveLength(3);
    expect(stored.every((r) => r.body_deflated instanceof Buffer)).toBe(true);
    expect(JSON.stringify(stored.map((r) => unpackBody(r.body_deflated)))).toContain('[Filtered]');
    // The dump reads the deflated bodies as text: the scrubbed messages are there, the secrets not.
    expect(await expectNoSecretAnywhere()).toContain('login failed');
  });

  it('appear nowhere once their event is dead-lettered, and the dead letter still opens', async () => {
    const uid = await capture(web, env, secretEvent('dead'));
    // Its worker dies during every attempt (each claim is lost unprocessed): it is dead-lettered as it is.
    for (let attempt = 0; attempt < 2; attempt++) {
      const [job] = await eventually(async () => {
        const fetched = await jobs.boss.fetch('errors.ingest', { batchSize: 10 });
        return fetched.length > 0 ? fetched : undefined;
      });
      await jobs.boss.fail('errors.ingest', job!.id, { error: 'heartbeat lost' });
    }
    const dead = await eventually(async () => (await deadLetters(h)).find((d) => d.uid === uid));
    expect(await queuedEvents(h)).toEqual([]);
    await expectNoSecretAnywhere();
    // An operator (or a re-drive) can still read it with the service key.
    expect(openPayload(keyring, dead).message).toContain(secrets.jwt);
  });
});

describe('a sealed payload on another event', () => {
  it('does not open there: the event is dead-lettered at once, and nothing is stored under the wrong uid', async () => {
    const other = await createTestEnv(h.db);
    const source = await capture(web, env, sampleEvent({ message: 'the original' }));
    const copied = await capture(web, env, sampleEvent({ message: 'overwritten' }));
    const crossEnv = await capture(web, other, sampleEvent({ message: 'other environment' }));
    const relabelled = await capture(web, env, sampleEvent({ message: 'relabelled', release: 'r-1' }));
    // Rewritten in the queue itself, as someone with write access to the database could.
    const sealed = (await queuedEvents(h)).find((q) => q.uid === source)!.payload_sealed;
    const rewrite = (uid: string, field: 'payload_sealed' | 'release', value: string) =>
      h.db.raw(
        `update pgboss.job set data = jsonb_set(data, '{events,0}', (data->'events'->0) || jsonb_build_object(?::text, ?::text))
          where name = 'errors.ingest' and data->'events'->0->>'uid' = ?`,
        [field, value, uid],
      );
    await rewrite(copied, 'payload_sealed', sealed);
    await rewrite(crossEnv, 'payload_sealed', sealed);
    // The plain release travels beside the seal and picks source maps: changing it must not go unnoticed either.
    await rewrite(relabelled, 'release', 'r-2');

    await ingestQueued(h, jobs);
    expect(await h.db('error_events').where({ uid: source }).first('uid')).toEqual({ uid: source });
    expect(await h.db('error_events').whereIn('uid', [copied, crossEnv, relabelled]).count({ n: '*' }).first()).toEqual(
      { n: '0' },
    );
    // Dead-lettered on the first attempt (no retry can make it open), sealed value and all.
    const dead = (await deadLetters(h)).filter((d) => [copied, crossEnv, relabelled].includes(d.uid));
    expect(dead).toHaveLength(3);
    for (const d of dead) expect(d).toMatchObject({ error: expect.stringMatching(/does not belong to this row/) });
    expect(dead.find((d) => d.uid === copied)!.payload_sealed).toBe(sealed);
    expect(await queuedEvents(h)).toEqual([]);
  });

  it('whose key is not loaded is retried, not buried: the operator can still add the old key', async () => {
    const uid = await capture(web, env, sampleEvent({ message: 'rotated away' }));
    const rotated = { currentId: 'k9', keys: new Map([['k9', Buffer.alloc(32, 9)]]) };
    expect(await ingestQueued(h, jobs, { keyring: rotated })).toBe(1);
    const [waiting] = await queuedEvents(h);
    expect(waiting).toMatchObject({ uid, state: 'retry' });
    const job = await jobs.boss.getJobById('errors.ingest', waiting!.job);
    expect(job?.output).toMatchObject({ error: expect.stringMatching(/CAIRN_ENCRYPTION_OLD_KEYS/) });
    await eventually(async () => (await ingestQueued(h, jobs)) > 0, { timeoutMs: 10_000, intervalMs: 200 });
    expect(await h.db('error_events').where({ uid }).first('uid')).toEqual({ uid });
  });
});

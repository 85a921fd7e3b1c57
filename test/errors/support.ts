// Error-tracking test helpers: the real web process and the real worker in-process, and shortcuts
// for captures and reads.
import { afterAll, beforeAll } from 'vitest';
import { keyringFromConfig } from '../../src/crypto.ts';
import { backlogClock, newEventUid } from '../../src/domain/errors/intake/capture.ts';
import { errorEventInput } from '../../src/contract/error-capture.ts';
import { sealPayload, type SealedPayloadRow } from '../../src/domain/errors/intake/sealed-payload.ts';
import { createBoss, Jobs } from '../../src/jobs/index.ts';
import { queues } from '../../src/queues.ts';
import { fromKnex } from 'pg-boss';
import { pino } from 'pino';
import type { IngestJob } from '../../src/domain/errors/intake/job.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { errorsIngest } from '../../workers/errors-ingest.ts';
import type { WebHandle } from '../../src/server.ts';
import { startWorker, type WorkerContext, type WorkerHandle } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { call, createHarness, createTestEnv, startTestWeb, type Answer, type Harness } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';

export interface Stack {
  web: WebHandle;
  worker: WorkerHandle<typeof queues> | undefined;
  stop(): Promise<void>;
}

export async function startStack(h: Harness, options: { worker?: boolean } = {}): Promise<Stack> {
  const web = await startTestWeb(h);
  const worker =
    options.worker === false
      ? undefined
      : await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  return {
    web,
    worker,
    async stop() {
      await worker?.stop();
      await web.stop();
    },
  };
}

/**
 * A test file's database, web, worker and environment, made before its tests and stopped after
 * them (read them inside tests). `worker: false` leaves the worker out, for tests that look at what
 * is queued rather than at its processing; `env` sets configuration variables (createHarness), as
 * useWeb's does. Registered before a file's own beforeAll, it runs first, so that one can use it.
 */
export function useStack(
  options: { worker?: boolean } = {},
  env: Record<string, string> = {},
): { h: Harness; s: Stack; env: CreatedEnv } {
  const t = {} as { h: Harness; s: Stack; env: CreatedEnv };
  beforeAll(async () => {
    t.h = await createHarness(env);
    t.s = await startStack(t.h, options);
    t.env = await createTestEnv(t.h.db);
  });
  afterAll(async () => {
    await t.s?.stop();
    await t.h?.close();
  });
  return t;
}

export const envBase = (env: CreatedEnv): string => `/v1/${env.env.name}`;

export function sampleEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_time: '2026-11-21T12:00:00Z',
    exception_type: 'TypeError',
    message: "Cannot read properties of undefined (reading 'id')",
    stack: [
      "TypeError: Cannot read properties of undefined (reading 'id')",
      '    at renderUser (/srv/app/src/users.js:10:15)',
      '    at handle (/srv/app/src/server.js:42:7)',
      '    at Layer.handle (/srv/app/node_modules/express/lib/router/layer.js:95:5)',
    ].join('\n'),
    service_name: 'api',
    ...overrides,
  };
}

export async function capture(web: WebHandle, env: CreatedEnv, event: Record<string, unknown>): Promise<string> {
  const res = await call<{ uid: string }>(web.url, 'POST', `${envBase(env)}/error_groups:capture`, {
    key: env.secretKey,
    body: { error_event: event },
  });
  if (res.status !== 202) throw new Error(`capture answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.uid;
}

/** The stored event (by its uid or the client's event_id), once the worker has processed it. */
export async function readStored<T = Record<string, unknown> & { name: string }>(
  web: WebHandle,
  env: CreatedEnv,
  uid: string,
  timeoutMs = 20_000,
): Promise<Answer<T>> {
  return eventually(
    async () => {
      const res = await call<T>(web.url, 'GET', `${envBase(env)}/error_groups/-/error_events/${uid}`, {
        key: env.secretKey,
      });
      return res.status === 200 ? res : undefined;
    },
    { timeoutMs },
  );
}

export const groupIdOf = (eventName: string): string => /error_groups\/([^/]+)\//.exec(eventName)![1]!;

/** An inbox (or dead-letter) row of `sampleEvent()`, sealed as a capture seals it. */
export function sealedSample(h: Harness, envId: string): SealedPayloadRow {
  return sealPayload(keyringFromConfig(h.config), envId, newEventUid('c0'), errorEventInput.parse(sampleEvent()));
}

/** The events waiting in `errors.ingest` jobs (pg-boss's job table), in job order: uid, job id and the sealed row. */
export async function queuedEvents(h: Harness): Promise<(SealedPayloadRow & { job: string; state: string })[]> {
  const { rows } = await h.db.raw<{ rows: (SealedPayloadRow & { job: string; state: string })[] }>(
    `select j.id::text as job, j.state::text as state, e->>'uid' as uid, e->>'env_id' as env_id, e->>'release' as release,
            e->>'payload_sealed' as payload_sealed
       from pgboss.job j, jsonb_array_elements(j.data->'events') e
      where j.name = 'errors.ingest' and j.state in ('created', 'retry', 'active') order by j.created_on, j.id`,
  );
  return rows;
}

/** Dead-lettered events (the `errors.ingest.dead` queue), with the error their worker gave. */
export async function deadLetters(h: Harness): Promise<(SealedPayloadRow & { error: string | null })[]> {
  const { rows } = await h.db.raw<{ rows: (SealedPayloadRow & { error: string | null })[] }>(
    `select e->>'uid' as uid, e->>'env_id' as env_id, e->>'release' as release, e->>'payload_sealed' as payload_sealed,
            j.data->>'error' as error
       from pgboss.job j, jsonb_array_elements(j.data->'events') e where j.name = 'errors.ingest.dead'`,
  );
  return rows;
}

/**
 * One pass of the real `errors.ingest` handler over the jobs queued now, as a worker makes it: a
 * fetch, then the handler on one transaction (which settles every job it fetched). Answers how many
 * jobs it fetched. `given`: a keyring or map loader instead of the worker's own.
 */
export async function ingestQueued(
  h: Harness,
  jobs: Jobs,
  given: Parameters<typeof errorsIngest>[1] = {},
): Promise<number> {
  const fetched = await jobs.boss.fetch<IngestJob>('errors.ingest', { batchSize: 100, includeMetadata: true });
  if (fetched.length === 0) return 0;
  const handler = errorsIngest({}, given);
  const ctx = {
    config: h.config,
    db: h.db,
    jobs,
    log: pino({ level: 'silent' }),
    store: createObjectStore(h.config),
    stopping: new AbortController().signal,
  };
  const inputs = fetched.map((j) => ({
    id: j.id,
    data: j.data,
    retryCount: j.retryCount,
    retryLimit: j.retryLimit,
    createdOn: j.createdOn,
  }));
  await h.db.transaction((trx) => handler(inputs, ctx as WorkerContext<typeof queues>, fromKnex(trx)));
  return fetched.length;
}

/** A web-side Jobs for tests that queue events without a web process (close it with `jobs.boss.stop`). */
export async function testJobs(h: Harness): Promise<Jobs> {
  const boss = createBoss(h.config, 'web');
  await boss.start();
  return new Jobs(boss, queues);
}

/**
 * Moves the clock of the web's pending-count reads (at most one a second, capture.ts) on by a
 * second, so that the next capture reads the count again without the test waiting a second; the
 * clock is the real one again after the file's tests.
 */
export function useBacklogClock(): { aSecondLater(): void } {
  let skew = 0;
  afterAll(() => {
    backlogClock.now = () => Date.now();
  });
  return {
    aSecondLater() {
      skew += 1_001;
      backlogClock.now = () => Date.now() + skew;
    },
  };
}

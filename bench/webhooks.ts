// Webhook delivery, every figure from one run, against baselines of the same run. One worker
// process as the Procfile starts it (workers/main.ts: every queue, the real `webhooks.deliver`
// handler) against a scratch database; this process emits the events (the domain's own emit, in
// the action's transaction) and runs the receivers (node:http, answering 204 at once unless told
// otherwise, checking every signature).
//   throughput: N events queued at once (end users created in bulk, 500 per transaction, the
//               worker running) drained to a local receiver: deliveries/s against a plain loop of
//               signed POSTs to the same receiver from this process, as many in flight as the
//               worker sends at once (the fast lane's fetch loops × attempts per fetch); the
//               worker's and its Postgres backends' CPU per delivery;
//   latency:    end users created one at a time (createEndUser) at a steady 50/s: time from the
//               action's commit to the receiver getting its request, p50 and p99, against a trivial
//               job's send → done on another queue (identity.sign-up) on the same idle worker;
//   burst:      10,000 error groups through the real ingest (errors.ingest jobs, one distinct
//               fingerprint per event, so each event makes a group and an `error_group.created`),
//               delivered to one endpoint; meanwhile another queue's trivial job (identity.sign-up,
//               its pending row absent, so one read) is timed by pg-boss from created to started,
//               against the same probe on the idle worker;
//   slow:       endpoint A answers after 2 s, endpoints B at once (each in its own environment):
//               200 events for a fresh B alone, then 200 for another fresh B and 200 for A at once:
//               the ratio of B's drain times.
// Each drain stops after BENCH_WEBHOOKS_WINDOW_MS: one cut off there is reported (its rate over
// the window), its queued attempts deleted so they do not run into the next part, and a goal it
// leaves untested is INCONCLUSIVE.
// Goals (the webhooks issue): deliveries/s and action → delivery p50/p99 measured (the latency's
// bar, p99 < 1 s, is this bench's: well under the 2 s poll, so the worker woke on NOTIFY); a burst
// of 10,000 error groups does not starve other queues; a slow endpoint does not hold back others.
// Hard checks (exit 1): no message reaches an endpoint twice (by webhook-id: the receivers are
// healthy, so any duplicate fails), none it was not sent, every signature verifies, every
// delivery received ends `succeeded`; and, for a drain that completed, each event has its
// delivery row and each row was received.
// Env: DATABASE_URL and the S3 variables of the tests; BENCH_WEBHOOKS_EVENTS (5000),
// BENCH_WEBHOOKS_RATE (events/s for latency, 50), BENCH_WEBHOOKS_SECONDS (10),
// BENCH_WEBHOOKS_BURST (error groups, 10000), BENCH_WEBHOOKS_SLOW_EVENTS (200),
// BENCH_WEBHOOKS_SLOW_MS (2000), BENCH_WEBHOOKS_WINDOW_MS (40000),
// BENCH_WEBHOOKS_PARTS (throughput,latency,burst,slow), BENCH_WEBHOOKS_NODE_FLAGS (extra node
// flags for the worker process, e.g. to profile it).
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { fromKnex } from 'pg-boss';
import { Webhook } from 'standardwebhooks';
import { endUserCreatedEvent } from '../src/domain/identity/present.ts';
import { keyringFromConfig } from '../src/crypto.ts';
import { createDb } from '../src/db.ts';
import { newId } from '../src/ids.ts';
import { createBoss, Jobs } from '../src/jobs/index.ts';
import { queues } from '../src/queues.ts';
import { runMigrations } from '../src/migrate.ts';
import { createEndUser } from '../src/domain/identity/users/users.ts';
import type { EndUserRow } from '../src/domain/identity/users/queries.ts';
import { newEventUid } from '../src/domain/errors/intake/capture.ts';
import { errorEventInput } from '../src/contract/error-capture.ts';
import { sealPayload } from '../src/domain/errors/intake/sealed-payload.ts';
import { enqueueEvents } from '../src/domain/errors/intake/writer.ts';
import { createEnvWithKeys, type CreatedEnv } from '../src/domain/tenancy/envs.ts';
import { messageBody } from '../src/domain/webhooks/outbox/catalogue.ts';
import { emit } from '../src/domain/webhooks/outbox/emit.ts';
import { createEndpoint } from '../src/domain/webhooks/endpoints/endpoints.ts';
import { deliveryQueues } from '../src/domain/webhooks/outbox/queries.ts';
import { signMessage } from '../src/domain/webhooks/endpoints/sign.ts';
import { cpuOf } from './cpu.ts';
import { ms, procfileArgs, quantile, report, repoRoot, scratchDatabase, until } from './support.ts';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const events = num('BENCH_WEBHOOKS_EVENTS', 5000);
const rate = num('BENCH_WEBHOOKS_RATE', 50);
const seconds = num('BENCH_WEBHOOKS_SECONDS', 10);
const burst = num('BENCH_WEBHOOKS_BURST', 10_000);
const slowEvents = num('BENCH_WEBHOOKS_SLOW_EVENTS', 200);
const slowMs = num('BENCH_WEBHOOKS_SLOW_MS', 2000);
const parts = new Set((process.env.BENCH_WEBHOOKS_PARTS ?? 'throughput,latency,burst,slow').split(','));
// Each drain stops at this window; one cut off by it is reported, its queued attempts deleted.
const windowMs = num('BENCH_WEBHOOKS_WINDOW_MS', 40_000);
// The baseline's requests in flight: as many as a worker's fast lane sends at once (its fetch loops
// times the attempts of a fetch).
const concurrency = queues['webhooks.deliver'].localConcurrency * queues['webhooks.deliver'].batchSize;

const scratch = await scratchDatabase();
const config = scratch.config;
const db = createDb(config, { poolMax: 8 });
const keyring = keyringFromConfig(config);
const children: ChildProcess[] = [];
const receivers: Receiver[] = [];
let jobs: Jobs | undefined;
let worker: Worker | undefined;
/** Hard failures: each fails the run (exit 1). */
const failures: string[] = [];
const summary: [string, string, string][] = [];

// ---------------------------------------------------------------------------------------------
// The receiver: records every request by webhook-id (duplicates counted) and when it came.

interface Receiver {
  url: string;
  port: number;
  /** The endpoint's secret, to verify signatures with; set once the endpoint exists. */
  secret: string | undefined;
  /** Milliseconds before answering (a slow receiver). */
  delayMs: number;
  /** webhook-id → requests with it. */
  counts: Map<string, number>;
  /** webhook-id → performance.now() of its first request. */
  firstAt: Map<string, number>;
  /** The body's data.id (the resource) → performance.now() of its first request. */
  bySubject: Map<string, number>;
  badSignatures: number;
  reset(): void;
  close(): Promise<void>;
}

async function startReceiver(delayMs = 0): Promise<Receiver> {
  const r: Receiver = {
    url: '',
    port: 0,
    secret: undefined,
    delayMs,
    counts: new Map(),
    firstAt: new Map(),
    bySubject: new Map(),
    badSignatures: 0,
    reset() {
      r.counts.clear();
      r.firstAt.clear();
      r.bySubject.clear();
      r.badSignatures = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const id = String(req.headers['webhook-id'] ?? '');
      const body = Buffer.concat(chunks).toString('utf8');
      r.counts.set(id, (r.counts.get(id) ?? 0) + 1);
      if (!r.firstAt.has(id)) r.firstAt.set(id, at);
      // Verified as a receiver would, with the `standardwebhooks` package; it answers the body.
      try {
        if (!r.secret) throw new Error('no secret yet');
        const message = new Webhook(r.secret).verify(body, {
          'webhook-id': id,
          'webhook-timestamp': String(req.headers['webhook-timestamp']),
          'webhook-signature': String(req.headers['webhook-signature']),
        }) as { data?: { id?: string } };
        const subject = message.data?.id;
        if (subject && !r.bySubject.has(subject)) r.bySubject.set(subject, at);
      } catch {
        r.badSignatures += 1;
      }
      if (r.delayMs > 0) setTimeout(() => res.writeHead(204).end(), r.delayMs);
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.port = (server.address() as AddressInfo).port;
  r.url = `http://127.0.0.1:${r.port}/hook`;
  receivers.push(r);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Environments, endpoints, events.

let envCount = 0;
async function newEnv(): Promise<CreatedEnv> {
  envCount += 1;
  return createEnvWithKeys(db, `orgs/bench/projects/webhooks/envs/e${envCount}`, 'test', keyring);
}

interface Target {
  env: CreatedEnv;
  receiver: Receiver;
  endpointId: string;
}

async function target(delayMs = 0): Promise<Target> {
  const env = await newEnv();
  const receiver = await startReceiver(delayMs);
  const { row, secret } = await createEndpoint(
    { config, db },
    { id: env.env.id, mode: 'test' },
    { url: receiver.url, event_types: ['*'] },
  );
  receiver.secret = secret;
  // In the fast lane, as after its first quick answer (test/webhooks/delivery.test.ts shows how it
  // gets there): the figures are the steady state. A slow receiver leaves it at its first attempt.
  await db('webhook_endpoints').where({ id: row.id }).update({ slow: false });
  return { env, receiver, endpointId: row.id };
}

/** `count` end users created in bulk, `perTx` per transaction, each with its end_user.created event. */
async function bulkUsers(env: CreatedEnv, count: number, perTx = 500): Promise<void> {
  for (let i = 0; i < count; i += perTx) {
    await db.transaction(async (trx) => {
      const rows = Array.from({ length: Math.min(perTx, count - i) }, (_, k) => {
        const email = `bulk${i + k}-${newId('x').slice(-8)}@example.com`;
        return { id: newId('eu'), env_id: env.env.id, email, email_normalized: email };
      });
      const users = (await trx('end_users').insert(rows).returning('*')) as EndUserRow[];
      await emit(
        fromKnex(trx),
        jobs!,
        users.map((u) => endUserCreatedEvent({ id: env.env.id, name: env.env.name }, { ...u, totp_active: false })),
      );
    });
  }
}

/** Deliveries of an endpoint not yet `succeeded`. */
const unsettled = async (endpointId: string) =>
  Number(
    (
      await db('webhook_deliveries')
        .where({ endpoint_id: endpointId })
        .whereNot({ state: 'succeeded' })
        .count({ n: '*' })
        .first()
    )?.n,
  );

interface Drain {
  /** Every event reached the receiver and every delivery row is settled within the window. */
  complete: boolean;
  /** Messages the receiver got (distinct webhook-ids). */
  delivered: number;
  /** Milliseconds from `t0` to the last delivery when complete, else to the window's end. */
  elapsed: number;
}

/**
 * Waits until `t`'s receiver got `expected` messages and every delivery row of its endpoint is
 * settled, or until `limitMs` after `t0`. A drain cut off by its window leaves its queued attempts
 * deleted (so they do not run into the next part) and its in-flight ones landed.
 */
async function drain(t: Target, expected: number, t0: number, limitMs: number): Promise<Drain> {
  const end = t0 + limitMs;
  for (;;) {
    if (t.receiver.firstAt.size >= expected && (await unsettled(t.endpointId)) === 0) {
      return { complete: true, delivered: t.receiver.firstAt.size, elapsed: lastArrival(t) - t0 };
    }
    if (performance.now() > end) break;
    await sleep(50);
  }
  for (const lane of deliveryQueues) await jobs!.boss.deleteQueuedJobs(lane);
  await until(
    'in-flight attempts to land',
    async () =>
      Number(
        (await db('pgboss.job').whereIn('name', deliveryQueues).where({ state: 'active' }).count({ n: '*' }).first())
          ?.n,
      ) === 0,
    60_000,
    50,
  );
  return { complete: false, delivered: t.receiver.firstAt.size, elapsed: limitMs };
}

const lastArrival = (t: Target) => Math.max(...t.receiver.firstAt.values());

const duplicates = (r: Receiver) => [...r.counts.values()].reduce((a, n) => a + n - 1, 0);
/** Each checked receiver's duplicates when checked: one that comes later (a job run again) fails the run too. */
const checked = new Map<Receiver, { part: string; duplicates: number }>();

/**
 * The hard checks for one endpoint: no message received twice, none received that it was not
 * sent, every signature verifies, every received message's delivery row `succeeded`; and, when the
 * drain completed, a delivery row for each of the `expected` events and every one received.
 * Deliveries a window cut off are counted, not failed (they are still pending: nothing was lost).
 */
async function check(part: string, t: Target, expected: number, d: Drain): Promise<Record<string, number>> {
  const rows: { message_id: string; state: string }[] = await db('webhook_deliveries')
    .where({ endpoint_id: t.endpointId })
    .select('message_id', 'state');
  const ids = new Set(rows.map((r) => r.message_id));
  const received = rows.filter((r) => t.receiver.counts.has(r.message_id));
  checked.set(t.receiver, { part, duplicates: duplicates(t.receiver) });
  const problems = {
    'duplicate requests (same webhook-id)': duplicates(t.receiver),
    'requests for no delivery of this endpoint': [...t.receiver.counts.keys()].filter((id) => !ids.has(id)).length,
    'signatures that do not verify': t.receiver.badSignatures,
    'received, but the delivery row not succeeded': received.filter((r) => r.state !== 'succeeded').length,
    'delivery rows missing (drained)': d.complete ? Math.max(0, expected - rows.length) : 0,
    'delivery rows never received (drained)': d.complete ? rows.length - received.length : 0,
  };
  for (const [what, n] of Object.entries(problems)) if (n > 0) failures.push(`${part}: ${n} ${what}`);
  return {
    ...problems,
    'deliveries still pending at the window end': d.complete ? 0 : rows.length - received.length,
  };
}

/** A goal's verdict line: met or not, `measured` (no bar), or `inconclusive` (the part could not test it). */
const verdict = (goal: string, pass: boolean | 'measured' | 'inconclusive', detail: string) => {
  const word = pass === true ? 'PASS' : pass === false ? 'FAIL' : pass.toUpperCase();
  process.stdout.write(`  verdict: ${word} ${goal}: ${detail}\n`);
  summary.push([goal, word, detail]);
};

// ---------------------------------------------------------------------------------------------
// The worker process.

interface Worker {
  child: ChildProcess;
  log: string;
  stop(): Promise<void>;
}

async function startWorkerProcess(): Promise<Worker> {
  const flags = (process.env.BENCH_WEBHOOKS_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const log = `${tmpdir()}/cairn-bench-webhooks-worker-${Date.now()}.log`;
  const child = spawn(process.execPath, [...flags, ...procfileArgs('worker')], {
    cwd: repoRoot,
    env: {
      ...process.env,
      DATABASE_URL: config.DATABASE_URL,
      CAIRN_ENCRYPTION_KEY: config.CAIRN_ENCRYPTION_KEY,
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', openSync(log, 'w'), 'inherit'],
  });
  children.push(child);
  await until(
    'the worker',
    () => {
      if (child.exitCode !== null) throw new Error(`the worker exited; see ${log}`);
      return readFileSync(log, 'utf8').includes('worker started');
    },
    60_000,
    50,
  );
  return {
    child,
    log,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    },
  };
}

/** CPU seconds of every Postgres backend the worker process holds (its pools and its LISTEN session), by pid. */
async function workerBackendsCpu(): Promise<Map<number, number>> {
  const { rows } = await db.raw<{ rows: { pid: number }[] }>(
    "select pid from pg_stat_activity where datname = current_database() and application_name like 'cairn-worker%'",
  );
  return new Map(rows.map((r) => [r.pid, cpuOf(r.pid)]));
}

/** What deliveries cost from here on: the worker's CPU and its Postgres backends' CPU, in ms per delivery. */
async function costMeter() {
  const w0 = cpuOf(worker!.child.pid!);
  const pg0 = await workerBackendsCpu();
  return async (deliveries: number) => {
    const pg = [...(await workerBackendsCpu())].reduce((a, [pid, now]) => a + now - (pg0.get(pid) ?? 0), 0);
    const per = (seconds: number) => (seconds * 1000) / Math.max(1, deliveries);
    return {
      'worker CPU ms per delivery': per(cpuOf(worker!.child.pid!) - w0),
      "the worker's Postgres backends, CPU ms per delivery": per(pg),
    };
  };
}

// ---------------------------------------------------------------------------------------------
// A probe on another queue: a trivial identity.sign-up job (its pending row does not exist, so the
// handler reads once and returns), timed by pg-boss's own clock from created to started and done.

interface Probe {
  start: number;
  done: number;
}

async function probe(): Promise<Probe> {
  const id = await jobs!.enqueue(db, 'identity.sign-up', { pending_id: newId('signup') });
  return until(
    'a probe job to complete',
    async () => {
      const { rows } = await db.raw<{ rows: { state: string; start: number; done: number }[] }>(
        `select state, extract(epoch from started_on - created_on) * 1000 as start,
                extract(epoch from completed_on - created_on) * 1000 as done
           from pgboss.job where name = 'identity.sign-up' and id = ?`,
        [id],
      );
      const row = rows[0];
      if (row?.state === 'failed') throw new Error('a probe job failed');
      return row?.state === 'completed' ? { start: Number(row.start), done: Number(row.done) } : undefined;
    },
    120_000,
    10,
  );
}

async function probes(count: number, gapMs: number): Promise<Probe[]> {
  const out: Probe[] = [];
  for (let i = 0; i < count; i++) {
    out.push(await probe());
    await sleep(gapMs);
  }
  return out;
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

// ---------------------------------------------------------------------------------------------
// Parts.

async function throughput(): Promise<void> {
  const t = await target();
  // The baseline: the same receiver, a plain loop of signed POSTs at the worker's concurrency.
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const env = { id: t.env.env.id, name: t.env.env.name };
  const now = new Date();
  const body = messageBody(
    endUserCreatedEvent(env, {
      id: newId('eu'),
      env_id: env.id,
      email: 'jane@example.com',
      email_normalized: 'jane@example.com',
      password_hash: null,
      email_verified_time: null,
      last_sign_in_time: null,
      create_time: now,
      update_time: now,
      locked_time: null,
      totp_active: false,
    }),
  );
  const post = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const headers = signMessage([t.receiver.secret!], `raw_${i}`, Math.floor(Date.now() / 1000), body);
      const payload = Buffer.from(body);
      const req = http.request(
        {
          host: '127.0.0.1',
          port: t.receiver.port,
          path: '/hook',
          method: 'POST',
          agent,
          headers: {
            ...headers,
            'content-type': 'application/json',
            'content-length': String(payload.length),
            'user-agent': 'bench',
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 204 ? resolve() : reject(new Error(`raw POST: ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  const rawRun = async (count: number) => {
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < count) await post(next++);
      }),
    );
    return (count / ms(t0)) * 1000;
  };
  await rawRun(Math.min(1000, events)); // warm up
  const raw = await rawRun(events);
  agent.destroy();
  if (t.receiver.badSignatures > 0) failures.push('throughput: the baseline POSTs did not verify');
  t.receiver.reset();

  // The events, queued at once with the worker running (each transaction's jobs wake it), drained
  // to the same receiver.
  const meter = await costMeter();
  const t0 = performance.now();
  await bulkUsers(t.env, events);
  const queued = ms(t0);
  const d = await drain(t, events, t0, windowMs);
  const cost = await meter(d.delivered);
  const perSecond = (d.delivered / d.elapsed) * 1000;
  report(`throughput: ${events} events queued at once (500 per transaction), one worker process`, {
    [`raw signed POSTs from this process, ${concurrency} in flight, requests/s`]: raw,
    'events queued (bulk end users + emit), s': queued / 1000,
    [d.complete
      ? 'drained, s (first emit → last delivery)'
      : `NOT drained: delivered within the ${windowMs / 1000} s window`]: d.complete ? d.elapsed / 1000 : d.delivered,
    'worker deliveries/s': perSecond,
    'worker deliveries/s ÷ raw POSTs/s': (perSecond / raw).toPrecision(3),
    ...cost,
    ...(await check('throughput', t, events, d)),
  });
  verdict(
    `${events} queued events drain within ${windowMs / 1000} s`,
    d.complete,
    d.complete ? `in ${(d.elapsed / 1000).toFixed(1)} s` : `${d.delivered} of ${events} delivered`,
  );
  verdict(
    'deliveries/s to a local receiver',
    'measured',
    `${perSecond.toFixed(1)}/s = ${(perSecond / raw).toFixed(4)} × raw signed POSTs (${raw.toFixed(0)}/s)`,
  );
}

async function latency(idle: Probe[]): Promise<void> {
  const t = await target();
  const emitted = new Map<string, number>();
  const total = rate * seconds;
  const inFlight: Promise<void>[] = [];
  const meter = await costMeter();
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    inFlight.push(
      createEndUser({ db, jobs: jobs! }, t.env.env.id, { email: `steady${i}@example.com` }).then((u) => {
        emitted.set(u.id, performance.now());
      }),
    );
  }
  await Promise.all(inFlight);
  const d = await drain(t, total, t0, seconds * 1000 + windowMs);
  const cost = await meter(d.delivered);
  const lat = sorted(
    [...emitted].flatMap(([id, at]) => {
      const got = t.receiver.bySubject.get(id);
      return got === undefined ? [] : [got - at];
    }),
  );
  const idleDone = sorted(idle.map((p) => p.done));
  const p50 = quantile(lat, 0.5);
  const p99 = quantile(lat, 0.99);
  report(`latency: ${total} end users created one at a time, ${rate}/s (createEndUser): commit → request`, {
    'action → delivery p50 ms': p50,
    'action → delivery p99 ms': p99,
    'action → delivery max ms': lat[lat.length - 1] ?? NaN,
    'baseline: trivial job on identity.sign-up, sent → done p50 ms': quantile(idleDone, 0.5),
    'action → delivery p50 ÷ trivial job p50': p50 / quantile(idleDone, 0.5),
    ...cost,
    ...(await check('latency', t, total, d)),
  });
  verdict(
    'action → delivery latency',
    d.complete && p99 < 1000,
    `p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms (${(p50 / quantile(idleDone, 0.5)).toFixed(2)} × a trivial job's p50; goal p99 < 1000 ms, under the 2 s poll: workers wake on NOTIFY)`,
  );
}

async function burstPart(idle: Probe[]): Promise<void> {
  const t = await target();
  // One distinct fingerprint per event: each event makes a group, and each group an event.
  const payload = (i: number) =>
    errorEventInput.parse({
      event_time: new Date().toISOString(),
      exception_type: 'BurstError',
      message: `burst ${i}`,
      fingerprint: `burst-${i}`,
      release: 'r1',
      service_name: 'api',
    });
  const during: Probe[] = [];
  let draining = true;
  const probing = (async () => {
    while (draining) {
      during.push(await probe());
      await sleep(200);
    }
  })();
  const t0 = performance.now();
  // As captures queue them: 1000 events per INSERT of their jobs (50 events a job).
  for (let i = 0; i < burst; i += 1000) {
    const rows = Array.from({ length: Math.min(1000, burst - i) }, (_, k) =>
      sealPayload(keyring, t.env.env.id, newEventUid('c0'), payload(i + k)),
    );
    await enqueueEvents(db, jobs!, rows);
  }
  const queued = ms(t0);
  let groupsAt = NaN;
  const counting = (async () => {
    while (draining && Number.isNaN(groupsAt)) {
      const n = Number((await db('error_groups').where({ env_id: t.env.env.id }).count({ n: '*' }).first())?.n);
      if (n >= burst) groupsAt = performance.now();
      else await sleep(100);
    }
  })();
  const d = await drain(t, burst, t0, windowMs);
  draining = false;
  await Promise.all([probing, counting]);
  const idleStart = sorted(idle.map((p) => p.start));
  const busyStart = sorted(during.map((p) => p.start));
  const busyDone = sorted(during.map((p) => p.done));
  const ratio50 = quantile(busyStart, 0.5) / quantile(idleStart, 0.5);
  const ratio99 = quantile(busyStart, 0.99) / quantile(idleStart, 0.99);
  const p99 = quantile(busyStart, 0.99);
  const perSecond = (d.delivered / d.elapsed) * 1000;
  report(`burst: ${burst} error groups through the real ingest (distinct fingerprints), one endpoint`, {
    'events queued (errors.ingest jobs), s': queued / 1000,
    'every group stored, s after queueing began': (groupsAt - t0) / 1000,
    [d.complete
      ? 'every group delivered, s after queueing began'
      : `NOT drained: delivered within the ${windowMs / 1000} s window`]: d.complete ? d.elapsed / 1000 : d.delivered,
    'deliveries/s over the burst': perSecond,
    'probes on identity.sign-up during the burst': during.length,
    'other queue created → started p50 ms, idle': quantile(idleStart, 0.5),
    'other queue created → started p99 ms, idle': quantile(idleStart, 0.99),
    'other queue created → started p50 ms, burst': quantile(busyStart, 0.5),
    'other queue created → started p99 ms, burst': p99,
    'other queue created → done p99 ms, burst': quantile(busyDone, 0.99),
    'started p50, burst ÷ idle': ratio50,
    'started p99, burst ÷ idle': ratio99,
    ...(await check('burst', t, burst, d)),
  });
  verdict(
    `${burst} error groups' deliveries drain within ${windowMs / 1000} s`,
    d.complete,
    d.complete ? `in ${(d.elapsed / 1000).toFixed(1)} s` : `${d.delivered} of ${burst} delivered`,
  );
  // Deliveries that did not drain loaded the worker little: the probes then say nothing of them.
  verdict(
    'a burst of error groups does not starve other queues',
    d.complete ? p99 < 1000 : 'inconclusive',
    `another queue's job starts after p50 ${quantile(busyStart, 0.5).toFixed(0)} ms / p99 ${p99.toFixed(0)} ms during the burst (${ratio50.toFixed(2)} / ${ratio99.toFixed(2)} × idle; goal p99 < 1000 ms)${d.complete ? '' : `, but only ${d.delivered} deliveries ran`}`,
  );
}

async function slow(): Promise<void> {
  const a = await target(slowMs);
  /** `slowEvents` events queued at once for a fresh fast endpoint B (and as many for A beside): B's drain. */
  const runB = async (withA: boolean) => {
    const b = await target();
    const t0 = performance.now();
    await Promise.all([
      bulkUsers(b.env, slowEvents, slowEvents),
      withA ? bulkUsers(a.env, slowEvents, slowEvents) : undefined,
    ]);
    const d = await drain(b, slowEvents, t0, windowMs);
    return { b, d, perSecond: (d.delivered / d.elapsed) * 1000 };
  };
  const alone = await runB(false);
  const beside = await runB(true);
  const aBy = a.receiver.firstAt.size;
  // A's receiver answers at once from now on, so what is left of its messages drains for the
  // checks (unless B's window already cut the queue off).
  a.receiver.delayMs = 0;
  const aDrain = await drain(a, slowEvents, performance.now(), beside.d.complete ? windowMs : 0);
  const ratio = alone.perSecond / beside.perSecond;
  const figures = (label: string, r: typeof alone) =>
    r.d.complete
      ? { [`B ${label}: drained, ms`]: r.d.elapsed }
      : { [`B ${label}: NOT drained, delivered within the ${windowMs / 1000} s window`]: r.d.delivered };
  const prefixed = (p: string, o: Record<string, number>) =>
    Object.fromEntries(Object.entries(o).map(([k, v]) => [`${p}: ${k}`, v]));
  report(`slow endpoint: A answers after ${slowMs} ms, B at once; ${slowEvents} events each, queued at once`, {
    ...figures('alone', alone),
    ...figures('beside A', beside),
    'B deliveries/s alone': alone.perSecond,
    'B deliveries/s beside A': beside.perSecond,
    "A's messages received by then": aBy,
    'B drain beside A ÷ B drain alone (goal ≈ 1)': ratio,
    ...prefixed('B alone', await check('slow, B alone', alone.b, slowEvents, alone.d)),
    ...prefixed('B beside A', await check('slow, B beside A', beside.b, slowEvents, beside.d)),
    ...prefixed('A', await check('slow, A', a, slowEvents, aDrain)),
  });
  // B not drained even alone: what holds it back is not A.
  const both = alone.d.complete && beside.d.complete;
  verdict(
    'a slow endpoint does not hold back others',
    both ? ratio <= 1.5 : 'inconclusive',
    `B takes ${ratio.toFixed(2)} × its time alone beside A (goal ≤ 1.5)${both ? '' : `, but B did not drain within ${windowMs / 1000} s (${alone.d.delivered} alone, ${beside.d.delivered} beside A, of ${slowEvents}): as deliveries/s over the window`}`,
  );
}

try {
  await runMigrations(config);
  const boss = createBoss(config, 'web');
  await boss.start();
  jobs = new Jobs(boss, queues);
  worker = await startWorkerProcess();
  const cpu0 = cpuOf(worker.child.pid!);
  const t0 = performance.now();
  await probes(5, 50); // warm
  const idle = await probes(20, 100);
  if (parts.has('throughput')) await throughput();
  if (parts.has('latency')) await latency(idle);
  if (parts.has('burst')) await burstPart(idle);
  if (parts.has('slow')) await slow();
  const workerCpu = cpuOf(worker.child.pid!) - cpu0;
  await worker.stop();
  for (const [r, c] of checked)
    if (duplicates(r) > c.duplicates)
      failures.push(`${c.part}: ${duplicates(r) - c.duplicates} duplicate requests after its check`);
  process.stdout.write(
    `\nsummary (${(ms(t0) / 1000).toFixed(0)} s; the worker process used ${workerCpu.toFixed(1)} s of CPU)\n`,
  );
  for (const [goal, word, detail] of summary)
    process.stdout.write(`  ${word.padEnd(12)} ${goal.padEnd(54)} ${detail}\n`);
  if (failures.length > 0) {
    process.stdout.write(`\nhard checks FAILED:\n${failures.map((f) => `  - ${f}\n`).join('')}`);
    process.exitCode = 1;
  } else
    process.stdout.write(
      '\nhard checks passed: no message received twice, every signature verified, every received delivery succeeded\n',
    );
} catch (err) {
  process.exitCode = 1;
  throw err;
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
  for (const r of receivers) await r.close();
  await jobs?.boss.stop({ graceful: false, close: true });
  await db.destroy();
  await scratch.drop();
}

// Error tracking speed and memory, every figure from one run, against baselines of the
// same run. The web and the worker run as their own processes (src/web.ts, workers/main.ts, as
// the Procfile runs them) against a scratch database; this process is the client.
//   accepted:  batchCapture events/s against a plain multi-row INSERT of the same payloads from this
//              process; single capture events/s with N requests in flight over keep-alive HTTP,
//              and the same events as Sentry envelopes (one per request, each named), all accepted;
//   processed: one worker process, 30-frame minified stacks through a ≥ 1 MB esbuild map, fed as
//              captures are (1000-event INSERTs) until all are stored; CPU per event of the worker
//              and of Postgres (steadier than rates on a shared machine); again after the store grows;
//              With 10 enabled alert rules on the environment (bench/alert-rules.ts) against none,
//              same worker, same store size: the cost of evaluating rules as events are stored
//              (the firings' sends still running once the events are stored are waited out before
//              the next run, their CPU given apart);
//   memory:    a fresh worker process's peak RSS (VmHWM) over events spread across many releases,
//              each with its own ≥ 1 MB map.
// Env: DATABASE_URL and the S3 variables of the tests; BENCH_ERRORS_EVENTS (10000), BENCH_ERRORS_STACKS
// (distinct stacks among them, 500), BENCH_ERRORS_SINGLES (5000), BENCH_ERRORS_INFLIGHT (16,64),
// BENCH_ERRORS_STORE (events in the store for the last processing run, 1000000),
// BENCH_ERRORS_MEMORY_EVENTS (100000), BENCH_ERRORS_RELEASES (50),
// BENCH_ERRORS_WEB_CONCURRENCY (the web's WEB_CONCURRENCY for single requests; 1, or e.g. 1,2),
// BENCH_ERRORS_PARTS (accepted,processed,memory), BENCH_ERRORS_NODE_FLAGS (extra node flags for the
// web and worker processes, e.g. to profile them).
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { build } from 'esbuild';
import { decodedMappings, TraceMap } from '@jridgewell/trace-mapping';
import { newEventUid } from '../src/domain/errors/intake/capture.ts';
import { errorEventInput, type ErrorEventInput } from '../src/contract/error-capture.ts';
import { processEvent } from '../src/domain/errors/pipeline/process.ts';
import { enqueueEvents } from '../src/domain/errors/intake/writer.ts';
import { operationsQueries } from '../src/domain/operations/queries.ts';
import { createBoss, Jobs } from '../src/jobs/index.ts';
import { queues } from '../src/queues.ts';
import { sealPayload } from '../src/domain/errors/intake/sealed-payload.ts';
import { defaultPolicy } from '../src/domain/errors/scrubbing/scrub.ts';
import { createPipelineCaches } from '../src/domain/errors/pipeline/caches.ts';
import { parseMap } from '../src/domain/errors/source-maps/cache.ts';
import { sourceMapBucket, uploadSourceMap } from '../src/domain/errors/source-maps/uploads.ts';
import { filePath } from '../src/domain/errors/pipeline/paths.ts';
import { keyringFromConfig } from '../src/crypto.ts';
import { createDb } from '../src/db.ts';
import { createEnvWithKeys } from '../src/domain/tenancy/envs.ts';
import { runMigrations } from '../src/migrate.ts';
import { addBenchRules, benchFirings, dropBenchRules } from './alert-rules.ts';
import { rulesFreshMs } from '../src/domain/alerts/fire/rule-cache.ts';
import { createObjectStore } from '../src/storage/index.ts';
import { cpuOf, cpuOfTree, postgresCpu as postgresCpuOf, postgresCpuSince as postgresCpuSinceOf } from './cpu.ts';
import {
  ms,
  procStatusBytes,
  report,
  startProcfile,
  stopStarted,
  scratchDatabase,
  until,
  freePort,
  jsonPoster,
} from './support.ts';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const n = num('BENCH_ERRORS_EVENTS', 10_000);
const stacks = num('BENCH_ERRORS_STACKS', 500);
const singles = num('BENCH_ERRORS_SINGLES', 5000);
const inflights = (process.env.BENCH_ERRORS_INFLIGHT ?? '16,64').split(',').map(Number);
const webConcurrency = (process.env.BENCH_ERRORS_WEB_CONCURRENCY ?? '1').split(',').map(Number);
const storeSize = num('BENCH_ERRORS_STORE', 1_000_000);
const memoryEvents = num('BENCH_ERRORS_MEMORY_EVENTS', 100_000);
const releases = num('BENCH_ERRORS_RELEASES', 50);
const parts = new Set((process.env.BENCH_ERRORS_PARTS ?? 'accepted,processed,memory').split(','));

const scratch = await scratchDatabase();
const config = { ...scratch.config, CAIRN_STORAGE_BUCKET_PREFIX: `cairn-bench-${Date.now().toString(36)}-` };
const db = createDb(config);
const keyring = keyringFromConfig(config);
let jobs: Jobs | undefined;
const childEnv = (extra: Record<string, string>) => ({
  ...process.env,
  DATABASE_URL: config.DATABASE_URL,
  CAIRN_ENCRYPTION_KEY: config.CAIRN_ENCRYPTION_KEY,
  CAIRN_STORAGE_BUCKET_PREFIX: config.CAIRN_STORAGE_BUCKET_PREFIX,
  ...extra,
});

/** A Procfile process with the scratch database; BENCH_ERRORS_NODE_FLAGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) before the Procfile's own flags. */
const start = (role: 'web' | 'worker', env: Record<string, string>) =>
  startProcfile(role, childEnv(env), (process.env.BENCH_ERRORS_NODE_FLAGS ?? '').split(' ').filter(Boolean));

const dbName = new URL(config.DATABASE_URL).pathname.slice(1);
/** CPU seconds of the scratch database's Postgres backends (bench/cpu.ts). */
const postgresCpu = () => postgresCpuOf(db, dbName);
const postgresCpuSince = (before: Map<number, number>) => postgresCpuSinceOf(db, dbName, before);

/** A bundle of ~2000 small functions, minified by esbuild: its map is over 1 MB. */
async function bigBundle(tag: string): Promise<{ map: Record<string, unknown>; positions: [number, number][] }> {
  const fns = Array.from(
    { length: 2000 },
    (_, i) =>
      `export function handler${i}(input: { id: number; name: string }): number {\n  const total = input.id * ${i} + input.name.length;\n  if (total < 0) {\n    throw new RangeError('negative ${i} ${tag}');\n  }\n  return total + helper${i}(input);\n}\nfunction helper${i}(x: { id: number }): number {\n  return x.id % ${i + 7};\n}\n`,
  ).join('\n');
  const out = await build({
    stdin: { contents: `// ${tag}\n${fns}`, sourcefile: 'src/handlers.ts', loader: 'ts' },
    bundle: true,
    minify: true,
    sourcemap: 'external',
    sourcesContent: true,
    write: false,
    outfile: 'dist/main.js',
    format: 'esm',
    logLevel: 'silent',
  });
  const map = JSON.parse(out.outputFiles.find((f) => f.path.endsWith('.map'))!.text) as Record<string, unknown>;
  const positions: [number, number][] = [];
  decodedMappings(new TraceMap(map as never)).forEach((segments, line) => {
    for (const s of segments) if (s.length >= 4) positions.push([line + 1, s[0] + 1]);
  });
  return { map, positions };
}

const file = 'https://shop.example.com/assets/main.1a2b3c4d.js';
/** Event i: one of `stacks` distinct 30-frame stacks (so groups repeat, as bugs do), its own message. */
function stackEvent(positions: [number, number][], release: string, i: number): ErrorEventInput {
  const s = i % stacks;
  const frames = Array.from({ length: 30 }, (_, k) => {
    const [line, col] = positions[(s * 31 + k * 977) % positions.length]!;
    return `    at ${String.fromCharCode(97 + (k % 26))} (${file}:${line}:${col})`;
  });
  return errorEventInput.parse({
    event_time: new Date(Date.UTC(2026, 10, 21, 12, 0, 0, i)).toISOString(),
    exception_type: 'RangeError',
    message: `negative value ${i} for user ${i % 50} (jane${i % 7}@example.com)`,
    stack: [`RangeError: negative`, ...frames].join('\n'),
    release,
    service_name: 'api',
    tags: { route: `/items/${i % 20}` },
    breadcrumbs: [{ message: 'GET /items', category: 'http' }],
  });
}

/**
 * Feeds events to a running worker as captures would (1000 events per INSERT of their jobs, each waking it),
 * and waits until it has stored them all: the rate is events over that whole time, the CPU is what
 * the worker process and Postgres spent in it.
 */
async function drain(worker: ChildProcess, envId: string, count: number, event: (i: number) => ErrorEventInput) {
  await db.raw('vacuum analyze');
  const pg0 = await postgresCpu();
  const w0 = cpuOf(worker.pid!);
  const t = performance.now();
  for (let i = 0; i < count; i += 1000) {
    // Sealed as the web process seals them, so the worker opens them as it opens captures.
    const rows = Array.from({ length: Math.min(1000, count - i) }, (_, k) =>
      sealPayload(keyring, envId, newEventUid('c0'), event(i + k)),
    );
    await enqueueEvents(db, jobs!, rows);
  }
  await until(
    'the worker to store every event',
    async () => {
      if (worker.exitCode !== null) throw new Error('the worker exited');
      return (await operationsQueries(db).intake()).pending === 0;
    },
    1_800_000,
    50,
  );
  const elapsed = ms(t);
  const workerCpu = cpuOf(worker.pid!) - w0;
  const pgCpu = await postgresCpuSince(pg0);
  const dead = await operationsQueries(db).deadLetters();
  if (dead > 0) throw new Error(`${dead} events failed to process`);
  return {
    perSecond: (count / elapsed) * 1000,
    workerMs: (workerCpu * 1000) / count,
    postgresMs: (pgCpu * 1000) / count,
  };
}

/**
 * Waits until the firings' sends the worker was still running when the events were stored are
 * done; answers the worker's and Postgres's CPU in that tail, per event of the run (`count`).
 */
async function sendsSettle(worker: ChildProcess, envId: string, count: number) {
  const pg0 = await postgresCpu();
  const w0 = cpuOf(worker.pid!);
  await until('the firings to be sent', async () => (await benchFirings(db, envId)).pending === 0, 600_000, 50);
  return {
    workerMs: ((cpuOf(worker.pid!) - w0) * 1000) / count,
    postgresMs: ((await postgresCpuSince(pg0)) * 1000) / count,
  };
}

type Env = Awaited<ReturnType<typeof createEnvWithKeys>>;

/** Waits until every worker's copy of the rules is read again after a change (rule-cache.ts). */
const rulesApply = () => new Promise((r) => setTimeout(r, rulesFreshMs + 100));

/**
 * A capture as a Sentry SDK would send it: an envelope with one event item, its frames from the
 * stack; made once per payload, as the parts around its event id (each request names its own).
 */
function envelopeParts(p: ErrorEventInput): string[] {
  const id = '@@event_id@@';
  const frames = [...(p.stack ?? '').matchAll(/at (\S+) \((.*):(\d+):(\d+)\)/g)]
    .map(([, fn, file, line, col]) => ({ function: fn, abs_path: file, lineno: Number(line), colno: Number(col) }))
    .reverse();
  const event = {
    event_id: id,
    timestamp: p.event_time,
    platform: 'javascript',
    release: p.release,
    exception: { values: [{ type: p.exception_type, value: p.message, stacktrace: { frames } }] },
    sdk: { name: 'sentry.javascript.browser', version: '11.12.0' },
  };
  return `{"event_id":"${id}","sent_at":"${new Date().toISOString()}"}\n{"type":"event"}\n${JSON.stringify(event)}`.split(
    id,
  );
}

const store = createObjectStore(config);

const expectStatus = async (answer: Promise<number>, want: number, what: string): Promise<void> => {
  const status = await answer;
  if (status !== want) throw new Error(`${what} answered ${status}`);
};

/** Single captures, named captures and Sentry envelopes through a web of `processes` processes. */
async function singleRequests(env: Env, payloads: ErrorEventInput[], processes: number, withBatches: boolean) {
  const port = await freePort();
  const web = start('web', { PORT: String(port), LOG_LEVEL: 'info', WEB_CONCURRENCY: String(processes) });
  const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(...inflights) });
  const post = jsonPoster(agent, port, env.secretKey, `/v1/${env.env.name}/error_groups`);
  const postEnvelope = jsonPoster(
    agent,
    port,
    undefined,
    `/api/${env.clientKey.projectNumber}/envelope/?sentry_key=${env.clientKey.publicKey}&sentry_version=7`,
  );
  await until(
    'the web process',
    () =>
      post(':capture', '{}').then(
        (s) => s === 400,
        () => false,
      ),
    60_000,
    50,
  );
  let batch: number | undefined;
  if (withBatches) {
    const t = performance.now();
    for (let i = 0; i < n; i += 1000) {
      const status = await post(':batchCapture', JSON.stringify({ error_events: payloads.slice(i, i + 1000) }));
      if (status !== 202) throw new Error(`batchCapture answered ${status}`);
    }
    batch = (n / ms(t)) * 1000;
  }
  const bodies = payloads.slice(0, 1000).map((p) => JSON.stringify({ error_event: p }));
  const envelopes = payloads.slice(0, 1000).map(envelopeParts);
  const namedBodies = payloads
    .slice(0, 1000)
    .map((p) => JSON.stringify({ error_event: { ...p, event_id: '@@event_id@@' } }).split('@@event_id@@'));
  const singleRates: Record<string, number> = {};
  const get = (path: string) =>
    new Promise<number>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path, agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        })
        .on('error', reject);
    });
  const webPid = web.child.pid!;
  /** `singles` requests, `inflight` at a time (`send(i)` makes the i-th): requests/s, and the web's CPU ms per request. */
  const phase = async (inflight: number, send: (i: number) => Promise<unknown>) => {
    let next = 0;
    const cpu0 = cpuOfTree(webPid);
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: inflight }, async () => {
        while (next < singles) await send(next++);
      }),
    );
    return { rate: (singles / ms(t0)) * 1000, webCpu: ((cpuOfTree(webPid) - cpu0) * 1000) / singles };
  };
  for (const inflight of inflights) {
    // The HTTP floor: GET /healthz (no key, no body, no database) at the same concurrency.
    const { rate: floor } = await phase(inflight, () => get('/healthz'));
    for (let i = 0; i < 200; i++) await post(':capture', bodies[i]!); // warm the connections
    // The web's CPU per event (steadier than rates on a shared machine): /proc, around each phase.
    const { rate: single, webCpu: singleCpu } = await phase(inflight, (i) =>
      expectStatus(post(':capture', bodies[i % bodies.length]!), 202, 'capture'),
    );
    // The same captures, each named (event_id): what idempotency costs, the baseline for envelopes.
    const { rate: namedRate, webCpu: namedCpu } = await phase(inflight, (i) => {
      const eventId = createHash('md5').update(`named-${processes}-${inflight}-${i}`).digest('hex');
      return expectStatus(post(':capture', namedBodies[i % 1000]!.join(eventId)), 202, 'capture');
    });
    const pg0 = await postgresCpu();
    const client0 = process.cpuUsage();
    // The same events as a Sentry SDK sends them: one envelope per event, each with its own id.
    const { rate: envelope, webCpu: envelopeCpu } = await phase(inflight, (i) => {
      const eventId = createHash('md5').update(`${processes}-${inflight}-${i}`).digest('hex');
      return expectStatus(postEnvelope('', envelopes[i % 1000]!.join(eventId)), 200, 'envelope');
    });
    // Where the box's cores went: this client and Postgres share them with the web.
    const clientUsage = process.cpuUsage(client0);
    const envelopeClientCpu = (clientUsage.user + clientUsage.system) / 1000 / singles;
    const envelopePgCpu = ((await postgresCpuSince(pg0)) * 1000) / singles;
    singleRates[`GET /healthz, ${inflight} in flight, requests/s`] = floor;
    singleRates[`single capture, ${inflight} in flight, events/s (≥ 2000)`] = single;
    singleRates[`  capture / healthz, ${inflight} in flight`] = single / floor;
    singleRates[`single capture with event_id, ${inflight} in flight, events/s`] = namedRate;
    singleRates[`  named / capture, ${inflight} in flight`] = namedRate / single;
    singleRates[`Sentry envelope, ${inflight} in flight, events/s (≥ 2000)`] = envelope;
    singleRates[`  envelope / capture, ${inflight} in flight`] = envelope / single;
    singleRates[`  envelope / named capture, ${inflight} in flight`] = envelope / namedRate;
    singleRates[`  web CPU ms per event: capture, ${inflight} in flight`] = singleCpu;
    singleRates[`  web CPU ms per event: named capture, ${inflight} in flight`] = namedCpu;
    singleRates[`  web CPU ms per event: envelope, ${inflight} in flight`] = envelopeCpu;
    singleRates[`  Postgres CPU ms per event: envelope, ${inflight} in flight`] = envelopePgCpu;
    singleRates[`  bench client CPU ms per event: envelope, ${inflight} in flight`] = envelopeClientCpu;
  }
  agent.destroy();
  web.child.kill('SIGTERM');
  await new Promise((resolve) => web.child.once('exit', resolve));
  return { batch, figures: singleRates };
}

/** batchCapture and single capture through a web process, against plain INSERTs from here. */
async function accepted(env: Env, payloads: ErrorEventInput[]): Promise<void> {
  await db.schema.createTable('bench_plain', (t) => {
    t.text('uid').primary();
    t.text('env_id');
    t.jsonb('payload');
  });
  const t = performance.now();
  for (let i = 0; i < n; i += 1000) {
    await db('bench_plain').insert(
      payloads.slice(i, i + 1000).map((p, k) => ({ uid: `u${i + k}`, env_id: env.env.id, payload: JSON.stringify(p) })),
    );
  }
  const plain = (n / ms(t)) * 1000;
  const singleRates: Record<string, number> = {};
  let batch = 0;
  for (const processes of webConcurrency) {
    const rates = await singleRequests(env, payloads, processes, processes === webConcurrency[0]);
    batch ||= rates.batch ?? 0;
    const suffix = processes === 1 ? '' : ` (WEB_CONCURRENCY=${processes})`;
    for (const [k, v] of Object.entries(rates.figures)) singleRates[`${k}${suffix}`] = v;
  }
  // Nothing lost: every accepted event is queued (the batches, then per web and concurrency 200
  // warm-up captures and three phases of singles), and every named capture claimed its id (the
  // envelopes' ids are claimed when a worker stores them: intake/capture.ts `ClaimAt`).
  const named = await db('error_event_ids').where({ env_id: env.env.id }).count({ n: '*' }).first();
  singleRates['named captures without their claim (= 0)'] =
    inflights.length * singles * webConcurrency.length - Number(named?.n);
  const { rows: queued } = await db.raw<{ rows: { n: string }[] }>(
    `select count(*) as n from pgboss.job j, jsonb_array_elements(j.data->'events') e
      where j.name = 'errors.ingest' and e->>'env_id' = ?`,
    [env.env.id],
  );
  singleRates['accepted events not queued (= 0)'] =
    n + webConcurrency.length * inflights.length * (200 + 3 * singles) - Number(queued[0]!.n);
  report('accepted (web process; requests from this process over keep-alive HTTP)', {
    'plain multi-row INSERT, events/s': plain,
    'batchCapture (1000 per request), events/s': batch,
    'batchCapture / plain INSERT (target ≥ 0.50)': batch / plain,
    ...singleRates,
  });
  await jobs!.boss.deleteAllJobs('errors.ingest');
}

/**
 * One worker process, end to end: a fresh worker's first events (cold: the map parsed, frames and
 * stacks made for the first time), then the same stacks again with the store at 10k events, then
 * again once the store has grown to `storeSize` events (flat from 10k to 1M).
 */
async function processed(env: Env, payloads: ErrorEventInput[], map: Record<string, unknown>): Promise<void> {
  // The baseline: the same pipeline (parse, symbolicate, scrub, group, serialise and deflate) in
  // this process, with no database and no object store.
  const json = JSON.stringify(map);
  const parsed = parseMap(json);
  const refs = [{ file, file_path: filePath(file), sha256: 'bench', size_bytes: json.length, object_key: 'bench' }];
  const caches = createPipelineCaches();
  const input = { maps: refs, load: async () => parsed, policy: caches.policies.get(defaultPolicy), caches };
  for (const p of payloads.slice(0, 500)) await processEvent(p, input); // warm up
  const t = performance.now();
  for (const p of payloads) await processEvent(p, input);
  const alone = (n / ms(t)) * 1000;
  const worker = start('worker', { LOG_LEVEL: 'info' });
  await until('the worker', () => readFileSync(worker.log, 'utf8').includes('worker started'), 60_000, 50);
  const again = (tag: string) => (i: number) => ({ ...payloads[i]!, message: `${payloads[i]!.message ?? ''} ${tag}` });
  const cold = await drain(worker.child, env.env.id, n, (i) => payloads[i]!);
  const small = Number((await db('error_events').count({ n: '*' }).first())?.n);
  const first = await drain(worker.child, env.env.id, n, again('again'));
  // The same again with 10 enabled rules, then without them once more (the store grew by n
  // between: the two "none" runs bracket the rules' run).
  await addBenchRules(db, env.env.id);
  // A worker reads an environment's rules again once its copy is a second old (rule-cache.ts).
  await rulesApply();
  const withRules = await drain(worker.child, env.env.id, n, again('rules'));
  const fired = await benchFirings(db, env.env.id);
  // The sends still running are waited out (their CPU apart), so the next run starts clean.
  const tail = await sendsSettle(worker.child, env.env.id, n);
  // The same events once more with the rules: their groups exist and are snoozed, so the rules are
  // evaluated and none fires (what a busy application's events cost most of the time).
  const evaluated = await drain(worker.child, env.env.id, n, again('rules'));
  const firedAgain = (await benchFirings(db, env.env.id)).firings - fired.firings;
  await dropBenchRules(db, env.env.id);
  await rulesApply();
  const noRules = await drain(worker.child, env.env.id, n, again('no rules'));
  const sample = await db('error_events').first('group_id', 'body_deflated');
  const grow = Math.max(0, storeSize - small - 4 * n);
  for (let done = 0; done < grow; done += 100_000) {
    await db.raw(
      `insert into error_events (uid, env_id, group_id, event_time, receive_time, release, service_name, body_deflated)
       select 'err_zz' || lpad((? + g)::text, 26, '0'), ?, ?, now(), now(), 'r0', 'api', ? from generate_series(1, ?) g`,
      [done, env.env.id, sample.group_id, sample.body_deflated, Math.min(100_000, grow - done)],
    );
    process.stdout.write(`  store: ${small + n + done + Math.min(100_000, grow - done)} events\r`);
  }
  await db.raw('vacuum analyze error_events');
  const grown = Number((await db('error_events').count({ n: '*' }).first())?.n);
  const second = await drain(worker.child, env.env.id, n, again('once more'));
  worker.child.kill('SIGTERM');
  await new Promise((r) => worker.child.once('exit', r));
  const none = (first.perSecond + noRules.perSecond) / 2;
  const noneCpu = (first.workerMs + first.postgresMs + noRules.workerMs + noRules.postgresMs) / 2;
  report(`processed with alert rules (the same worker, ${n} events per run)`, {
    'events/s, no rules (mean of the runs before and after)': none,
    '  worker CPU ms per event (no rules, after)': noRules.workerMs,
    '  Postgres CPU ms per event (no rules, after)': noRules.postgresMs,
    'events/s, 10 enabled rules': withRules.perSecond,
    '  worker CPU ms per event (rules)': withRules.workerMs,
    '  Postgres CPU ms per event (rules)': withRules.postgresMs,
    '  firings recorded': fired.firings,
    '  actions still pending when stored': fired.pending,
    'rate, rules / none (≈ 1.0)': withRules.perSecond / none,
    'CPU per event, rules / none (≈ 1.0)': (withRules.workerMs + withRules.postgresMs) / noneCpu,
    '  worker CPU ms per event, sends still running once stored (rules)': tail.workerMs,
    '  Postgres CPU ms per event, sends still running once stored (rules)': tail.postgresMs,
    'CPU per event with those sends, rules / none (≈ 1.0)':
      (withRules.workerMs + withRules.postgresMs + tail.workerMs + tail.postgresMs) / noneCpu,
    'events/s, the same 10 rules, none firing (groups seen, snoozed)': evaluated.perSecond,
    '  worker CPU ms per event (rules, none firing)': evaluated.workerMs,
    '  Postgres CPU ms per event (rules, none firing)': evaluated.postgresMs,
    '  firings recorded (none firing)': firedAgain,
    'rate, rules none firing / none (≈ 1.0)': evaluated.perSecond / none,
    'CPU per event, rules none firing / none (≈ 1.0)': (evaluated.workerMs + evaluated.postgresMs) / noneCpu,
  });
  report(
    `processed end to end (one worker process, 30 frames, ${(json.length / 1e6).toFixed(2)} MB map, ${n} events, ${stacks} stacks)`,
    {
      'processing alone (this process, no database), events/s': alone,
      "a fresh worker's first events (cold), events/s": cold.perSecond,
      '  worker CPU ms per event  ': cold.workerMs,
      '  Postgres CPU ms per event  ': cold.postgresMs,
      [`events/s, store holding ${small} events (≥ 2000)`]: first.perSecond,
      '  end to end / processing alone': first.perSecond / alone,
      '  worker CPU ms per event': first.workerMs,
      '  Postgres CPU ms per event': first.postgresMs,
      [`events/s, store holding ${grown} events (≥ 2000)`]: second.perSecond,
      '  worker CPU ms per event ': second.workerMs,
      '  Postgres CPU ms per event ': second.postgresMs,
      'rate, 10k / grown (flat ≈ 1.0)': first.perSecond / second.perSecond,
      'CPU per event, grown / 10k (flat ≈ 1.0)':
        (second.workerMs + second.postgresMs) / (first.workerMs + first.postgresMs),
    },
  );
}

/**
 * A fresh worker over events spread across many releases, each with its own map, in release order
 * (a rolling deploy), so the map cache fills, then evicts.
 */
async function memory(env: Env, main: Awaited<ReturnType<typeof bigBundle>>): Promise<void> {
  const perRelease = Math.ceil(memoryEvents / releases);
  const positions: [number, number][][] = [];
  for (let r = 1; r <= releases; r++) {
    const b = r === 1 ? main : await bigBundle(`release-${r}`);
    await uploadSourceMap({ db, store, config }, env.env.id, `m${r}`, file, b.map);
    positions.push(b.positions);
  }
  const worker = start('worker', { LOG_LEVEL: 'info' });
  await until('the worker', () => readFileSync(worker.log, 'utf8').includes('worker started'), 60_000, 50);
  const idle = procStatusBytes(worker.child.pid!, 'VmRSS');
  const mem = await drain(worker.child, env.env.id, perRelease * releases, (i) => {
    const r = Math.floor(i / perRelease);
    return stackEvent(positions[r]!, `m${r + 1}`, i % perRelease);
  });
  report(`memory (one worker process, ${perRelease * releases} events over ${releases} releases' maps)`, {
    'events/s': mem.perSecond,
    '  worker CPU ms per event': mem.workerMs,
    '  Postgres CPU ms per event': mem.postgresMs,
    'worker RSS when idle, MB': idle / 1e6,
    'worker peak RSS (VmHWM), MB (< 300)': procStatusBytes(worker.child.pid!, 'VmHWM') / 1e6,
  });
  worker.child.kill('SIGTERM');
}

try {
  await runMigrations(config);
  const boss = createBoss(config, 'web');
  await boss.start();
  jobs = new Jobs(boss, queues);
  const env = await createEnvWithKeys(db, 'orgs/bench/projects/errors/envs/prod', 'test', keyring);
  const main = await bigBundle('release-0');
  await uploadSourceMap({ db, store, config }, env.env.id, 'r0', file, main.map);
  const payloads = Array.from({ length: n }, (_, i) => stackEvent(main.positions, 'r0', i));
  if (parts.has('accepted')) await accepted(env, payloads);
  if (parts.has('processed')) await processed(env, payloads, main.map);
  if (parts.has('memory')) await memory(env, main);
} finally {
  await stopStarted();
  // The maps uploaded here are megabytes each: leave nothing behind in the shared object store.
  const cleanup = async () => {
    const keys: string[] = await db('error_source_maps')
      .pluck('object_key')
      .catch(() => []);
    for (const key of keys) await store.delete(sourceMapBucket(config), key).catch(() => undefined);
    await store.deleteBucket(sourceMapBucket(config)).catch(() => undefined);
  };
  await Promise.race([cleanup(), new Promise((r) => setTimeout(r, 30_000).unref())]);
  await jobs?.boss.stop({ graceful: false, close: true });
  await db.destroy();
  await scratch.drop();
}

// Error tracking speed (issue #3), at a modest scale for a shared 2-core machine:
//   accepted:  batchCapture events/s against a plain multi-row INSERT of the same payloads from the
//              same process; single capture events/s (16 in flight);
//   processed: one in-process worker, 30-frame minified stacks through a ≥ 1 MB esbuild map, end to
//              end (inbox → stored), before and after the store grows by BENCH_ERRORS_GROW rows;
//   memory:    peak RSS while processing events spread over 50 releases' distinct maps.
// Env: DATABASE_URL and the S3 variables of the tests; BENCH_ERRORS_EVENTS (10000),
// BENCH_ERRORS_GROW (200000), BENCH_ERRORS_RELEASES (50).
import { build } from 'esbuild';
import { decodedMappings, TraceMap } from '@jridgewell/trace-mapping';
import { acceptEvents } from '../src/domain/observability/capture.ts';
import { errorEventInput, type ErrorEventInput } from '../src/domain/observability/event-schema.ts';
import { uploadSourceMap } from '../src/domain/observability/source-maps.ts';
import { createDb } from '../src/db.ts';
import { createEnvWithKeys } from '../src/domain/tenancy/envs.ts';
import { createBoss, Jobs, queues } from '../src/jobs.ts';
import { runMigrations } from '../src/migrate.ts';
import { startWeb } from '../src/server.ts';
import { createObjectStore } from '../src/storage/index.ts';
import { startWorker } from '../src/worker.ts';
import { handlers } from '../workers/handlers.ts';
import { ms, report, scratchDatabase } from './support.ts';

const n = Number(process.env.BENCH_ERRORS_EVENTS ?? 10_000);
const grow = Number(process.env.BENCH_ERRORS_GROW ?? 200_000);
const releases = Number(process.env.BENCH_ERRORS_RELEASES ?? 50);
const scratch = await scratchDatabase();
const config = { ...scratch.config, CAIRN_STORAGE_BUCKET_PREFIX: `cairn-bench-${Date.now().toString(36)}-` };
const db = createDb(config);

/** A bundle of ~2000 small functions, minified by esbuild: its map is over 1 MB. */
async function bigBundle(tag: string): Promise<{ map: Record<string, unknown>; positions: [number, number][] }> {
  const fns = Array.from({ length: 2000 }, (_, i) =>
    `export function handler${i}(input: { id: number; name: string }): number {\n  const total = input.id * ${i} + input.name.length;\n  if (total < 0) {\n    throw new RangeError('negative ${i} ${tag}');\n  }\n  return total + helper${i}(input);\n}\nfunction helper${i}(x: { id: number }): number {\n  return x.id % ${i + 7};\n}\n`).join('\n');
  const out = await build({
    stdin: { contents: `// ${tag}\n${fns}`, sourcefile: 'src/handlers.ts', loader: 'ts' }, bundle: true, minify: true,
    sourcemap: 'external', sourcesContent: true, write: false, outfile: 'dist/main.js', format: 'esm', logLevel: 'silent',
  });
  const map = JSON.parse(out.outputFiles.find((f) => f.path.endsWith('.map'))!.text) as Record<string, unknown>;
  const positions: [number, number][] = [];
  decodedMappings(new TraceMap(map as never)).forEach((segments, line) => {
    for (const s of segments) if (s.length >= 4) positions.push([line + 1, s[0] + 1]);
  });
  return { map, positions };
}

function stackEvent(file: string, positions: [number, number][], release: string, i: number): ErrorEventInput {
  const frames = Array.from({ length: 30 }, (_, k) => {
    const [line, col] = positions[(i * 31 + k * 977) % positions.length]!;
    return `    at ${String.fromCharCode(97 + (k % 26))} (${file}:${line}:${col})`;
  });
  return errorEventInput.parse({
    event_time: new Date(Date.UTC(2026, 10, 21, 12, 0, 0, i)).toISOString(), exception_type: 'RangeError',
    message: `negative value for user ${i % 50} (jane${i % 7}@example.com)`, stack: [`RangeError: negative`, ...frames].join('\n'),
    release, service_name: 'api', tags: { route: `/items/${i % 20}` }, breadcrumbs: [{ message: 'GET /items', category: 'http' }],
  });
}

async function processAll(count: number, boss: { stop(): Promise<void> } | undefined, start: () => Promise<unknown>): Promise<{ perSecond: number; peakRss: number }> {
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 50);
  const t = performance.now();
  await start();
  for (;;) {
    const row = await db('error_event_inbox').count({ n: '*' }).first();
    if (Number(row?.n) === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const elapsed = ms(t);
  clearInterval(sampler);
  void boss;
  return { perSecond: (count / elapsed) * 1000, peakRss };
}

try {
  await runMigrations(config);
  const env = await createEnvWithKeys(db, 'orgs/bench/projects/errors/envs/prod', 'test');
  const store = createObjectStore(config);
  const boss = createBoss(config, 'web');
  await boss.start();
  const jobs = new Jobs(boss, queues);
  const file = 'https://shop.example.com/assets/main.1a2b3c4d.js';
  const main = await bigBundle('release-0');
  const mapBytes = Buffer.byteLength(JSON.stringify(main.map));
  await uploadSourceMap({ db, store, config }, env.env.id, 'r0', file, main.map);
  const payloads = Array.from({ length: n }, (_, i) => stackEvent(file, main.positions, 'r0', i));

  // Accepted: the same payloads, a plain INSERT of 1000-row statements against batchCapture.
  await db.schema.createTable('bench_plain', (t) => {
    t.text('uid').primary();
    t.text('env_id');
    t.jsonb('payload');
  });
  let t = performance.now();
  for (let i = 0; i < n; i += 1000) {
    await db('bench_plain').insert(payloads.slice(i, i + 1000).map((p, k) => ({ uid: `u${i + k}`, env_id: env.env.id, payload: JSON.stringify(p) })));
  }
  const plain = (n / ms(t)) * 1000;
  const web = await startWeb(config, { host: '127.0.0.1', port: 0 });
  const base = `${web.url}/v1/${env.env.name}/error_groups`;
  const headers = { authorization: `Bearer ${env.secretKey}`, 'content-type': 'application/json' };
  t = performance.now();
  for (let i = 0; i < n; i += 1000) {
    const res = await fetch(`${base}:batchCapture`, { method: 'POST', headers, body: JSON.stringify({ error_events: payloads.slice(i, i + 1000) }) });
    if (res.status !== 202) throw new Error(`batchCapture answered ${res.status}`);
    await res.arrayBuffer();
  }
  const batch = (n / ms(t)) * 1000;
  const singles = Math.min(n, 3000);
  let next = 0;
  t = performance.now();
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < singles) {
      const i = next++;
      const res = await fetch(`${base}:capture`, { method: 'POST', headers, body: JSON.stringify({ error_event: payloads[i] }) });
      if (res.status !== 202) throw new Error(`capture answered ${res.status}`);
      await res.arrayBuffer();
    }
  }));
  const single = (singles / ms(t)) * 1000;
  await web.stop();
  report('accepted', {
    'plain multi-row INSERT, events/s': plain,
    'batchCapture (1000 per request), events/s': batch,
    'batchCapture / plain INSERT (target ≥ 0.50)': batch / plain,
    'single capture, 16 in flight, events/s (≥ 2000)': single,
  });

  // Processed end to end: everything accepted above (n + singles events) through one worker.
  const backlog = n + singles;
  const worker = await startWorker(config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  const first = await processAll(backlog, undefined, async () => undefined);
  // Grow the store, then the same again.
  const sample = await db('error_events').first('group_id', 'body');
  await db.raw(
    `insert into error_events (uid, env_id, group_id, event_time, receive_time, release, service_name, body)
     select 'err_zz' || lpad(g::text, 26, '0'), ?, ?, now(), now(), 'r0', 'api', ?::jsonb from generate_series(1, ?) g`,
    [env.env.id, sample.group_id, JSON.stringify(sample.body), grow],
  );
  await db.raw('analyze error_events');
  const second = await processAll(n, undefined, () => acceptEvents({ db, jobs, cell: 'c0' }, env.env.id, payloads).then(() => undefined));
  const stored = await db('error_events').count({ n: '*' }).first();
  report(`processed end to end (one worker, 30 frames, ${(mapBytes / 1e6).toFixed(2)} MB map)`, {
    'events/s, store starting empty (≥ 2000)': first.perSecond,
    [`events/s, store holding ${Number(stored?.n) - n} events`]: second.perSecond,
    'per-event cost, grown / empty (flat ≈ 1.0)': first.perSecond / second.perSecond,
  });

  // Memory: events spread over many releases, each with its own ≥ 1 MB map.
  const spread: ErrorEventInput[] = [];
  for (let r = 1; r <= releases; r++) {
    const b = r === 1 ? main : await bigBundle(`release-${r}`);
    await uploadSourceMap({ db, store, config }, env.env.id, `r${r}`, file, b.map);
    for (let i = 0; i < Math.ceil(n / releases); i++) spread.push(stackEvent(file, b.positions, `r${r}`, i));
  }
  const mem = await processAll(spread.length, undefined, async () => {
    for (let i = 0; i < spread.length; i += 1000) await acceptEvents({ db, jobs, cell: 'c0' }, env.env.id, spread.slice(i, i + 1000));
  });
  report(`memory (${spread.length} events over ${releases} releases' maps)`, {
    'events/s': mem.perSecond,
    'peak RSS of the whole bench process, MB (< 300)': mem.peakRss / 1e6,
  });
  await worker.stop();
  await boss.stop({ graceful: false, close: true });
} finally {
  await db.destroy();
  await scratch.drop();
}

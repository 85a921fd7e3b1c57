// The job pipeline: pg-boss's defaults (poll every 2 s, one job per fetch, shared table) against
// the settings of src/jobs/ and the queues (LISTEN/NOTIFY wake-ups, batch fetch, a partitioned
// table), measured in the same run on the same database: single-job latency and drain throughput.
import type { PgBoss, WorkOptions } from 'pg-boss';
import { createBoss } from '../src/jobs/index.ts';
import { ms, quantile, report, scratchDatabase } from './support.ts';

const jobs = Number(process.env.BENCH_JOBS ?? 3000);
const pings = Number(process.env.BENCH_PINGS ?? 6);
// The defaults drain one job per 2 s poll; a window bounds the run and still gives a rate.
const windowMs = Number(process.env.BENCH_WINDOW_MS ?? 10_000);

async function measure(boss: PgBoss, queue: string, work: WorkOptions) {
  let done = 0;
  let waiter: (() => void) | undefined;
  let target = 0;
  await boss.work(queue, work, async (batch) => {
    done += batch.length;
    if (done >= target) waiter?.();
  });
  const until = (n: number, limitMs = 60_000) =>
    new Promise<void>((r) => {
      target = n;
      waiter = r;
      if (done >= n) r();
      setTimeout(r, limitMs).unref();
    });

  const latencies: number[] = [];
  for (let i = 0; i < pings; i++) {
    const start = performance.now();
    const finished = until(done + 1);
    await boss.send(queue, { i });
    await finished;
    latencies.push(ms(start));
  }
  latencies.sort((a, b) => a - b);

  const base = done;
  await boss.insert(
    queue,
    Array.from({ length: jobs }, (_, i) => ({ data: { i } })),
  );
  const start = performance.now();
  await until(base + jobs, windowMs);
  const seconds = ms(start) / 1000;
  await boss.offWork(queue);
  return { p50: quantile(latencies, 0.5), throughput: (done - base) / seconds };
}

const db = await scratchDatabase();
try {
  const boss = createBoss(db.config, 'release', { useListenNotify: true, supervise: false, schedule: false });
  await boss.start();
  await boss.createQueue('bench.default');
  await boss.createQueue('bench.tuned', { partition: true, notify: true });

  const defaults = await measure(boss, 'bench.default', {});
  const tuned = await measure(boss, 'bench.tuned', {
    batchSize: 100,
    pollingIntervalSeconds: 2,
    notifyPollingIntervalSeconds: 5,
    burstWhenBatchFull: true,
  });
  await boss.stop({ graceful: false, close: true });

  report(`jobs: ${jobs} queued jobs drained (at most ${windowMs / 1000} s each), ${pings} single-job round trips`, {
    'pg-boss defaults: single job p50 ms': defaults.p50,
    'tuned (notify + batch 100 + partition): p50 ms': tuned.p50,
    'latency ratio defaults / tuned': defaults.p50 / tuned.p50,
    'pg-boss defaults: drained jobs/s': defaults.throughput,
    'tuned: drained jobs/s': tuned.throughput,
    'throughput ratio tuned / defaults': tuned.throughput / defaults.throughput,
  });
} finally {
  await db.drop();
}

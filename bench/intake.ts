// The error intake's queue, measured two ways on the same database in the same run, on pg-boss 12
// tuned as domain/errors/queues.ts tunes it (a partitioned queue, batched `insert`, batch fetch, LISTEN/NOTIFY
// wake-ups): one job per event, against the events packed into jobs as captures pack them
// (domain/errors/intake/job.ts). Same sealed payloads (what a capture writes), no
// processing: this is what the queue itself costs per event, accepted and drained, on top of the
// pipeline's own cost measured in bench/errors.ts. docs/queues.md holds the figures and the decision.
import { createBoss } from '../src/jobs/index.ts';
import { createDb } from '../src/db.ts';
import { keyringFromConfig } from '../src/crypto.ts';
import { newEventUid } from '../src/domain/errors/intake/capture.ts';
import { errorEventInput } from '../src/contract/error-capture.ts';
import { packJobs } from '../src/domain/errors/intake/job.ts';
import { sealPayload } from '../src/domain/errors/intake/sealed-payload.ts';
import { createEnvWithKeys } from '../src/domain/tenancy/envs.ts';
import { runMigrations } from '../src/migrate.ts';
import { ms, report, scratchDatabase } from './support.ts';

const events = Number(process.env.BENCH_INTAKE_EVENTS ?? 20_000);
const batch = 1000;
const claim = 200;

const scratch = await scratchDatabase();
const db = createDb(scratch.config);
try {
  await runMigrations(scratch.config);
  const keyring = keyringFromConfig(scratch.config);
  const env = await createEnvWithKeys(db, 'orgs/bench/projects/bench/envs/intake', 'test', keyring);
  const event = errorEventInput.parse({
    event_time: '2026-11-25T10:00:00Z',
    exception_type: 'TypeError',
    message: "Cannot read properties of undefined (reading 'id')",
    stack: [
      'TypeError: x',
      ...Array.from({ length: 30 }, (_, k) => `    at f${k} (https://x.io/assets/main.1a2b3c4d.js:1:${1000 + k})`),
    ].join('\n'),
    release: 'r1',
  });
  const rows = Array.from({ length: events }, () => sealPayload(keyring, env.env.id, newEventUid('c0'), event));
  const chunks = Array.from({ length: events / batch }, (_, i) => rows.slice(i * batch, (i + 1) * batch));

  const boss = createBoss(scratch.config, 'release', { useListenNotify: true, supervise: false, schedule: false });
  await boss.start();
  /** Inserts every chunk's jobs, then drains them in fetches of `fetch` jobs; events per second both ways. */
  const measure = async (queue: string, jobsOf: (c: typeof rows) => object[], fetch: number) => {
    await boss.createQueue(queue, { partition: true, notify: true });
    let t = performance.now();
    for (const c of chunks)
      await boss.insert(
        queue,
        jobsOf(c).map((data) => ({ data })),
      );
    const accepted = events / (ms(t) / 1000);
    let done = 0;
    t = performance.now();
    await new Promise<void>((resolve) => {
      void boss.work(
        queue,
        { batchSize: fetch, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true },
        async (jobs) => {
          done += jobs.reduce((n, j) => n + ((j.data as { events?: unknown[] }).events?.length ?? 1), 0);
          if (done >= events) resolve();
        },
      );
    });
    const drained = events / (ms(t) / 1000);
    await boss.offWork(queue);
    return { accepted, drained };
  };
  const single = await measure('bench.single', (c) => c.map((r) => ({ ...r })), claim);
  const packed = await measure('bench.packed', (c) => packJobs(c), 16);
  await boss.stop({ graceful: false, close: true });

  report(
    `intake queue: ${events} sealed events (${rows[0]!.payload_sealed.length} characters each), batches of ${batch}, fetches of ${claim} jobs (one per event) or 16 (packed)`,
    {
      'one job per event: accepted events/s': single.accepted,
      'packed jobs: accepted events/s': packed.accepted,
      '  accepted, packed / one per event': packed.accepted / single.accepted,
      'one job per event: drained events/s (fetches of 200 jobs)': single.drained,
      'packed jobs: drained events/s (fetches of 16 jobs)': packed.drained,
      '  drained, packed / one per event': packed.drained / single.drained,
    },
  );
} finally {
  await db.destroy();
  await scratch.drop();
}

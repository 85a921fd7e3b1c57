// The error intake's queue, measured two ways on the same database in the same run: the inbox
// table it uses today (a capture is a row; workers claim batches under a lease and delete what they
// stored) against pg-boss 12 tuned as src/jobs.ts tunes it (a partitioned queue, batched `insert`,
// batch fetch, LISTEN/NOTIFY wake-ups). Same sealed payloads (what a capture writes), no processing:
// this is what the queue itself costs per event, accepted and drained, on top of the pipeline's own
// cost measured in bench/errors.ts. docs/queues.md holds the figures and the decision.
import { createBoss } from '../src/jobs.ts';
import { createDb } from '../src/db.ts';
import { keyringFromConfig } from '../src/crypto.ts';
import { newEventUid } from '../src/domain/observability/intake/capture.ts';
import { errorEventInput } from '../src/domain/observability/intake/event-schema.ts';
import { ingestQueries } from '../src/domain/observability/intake/queries.ts';
import { sealPayload } from '../src/domain/observability/intake/sealed-payload.ts';
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
  const env = await createEnvWithKeys(db, 'orgs/bench/projects/bench/envs/intake', 'test');
  const keyring = keyringFromConfig(scratch.config);
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

  // The inbox: insert in batches (as batchCapture does), then claim and delete until empty.
  const q = ingestQueries(db);
  let t = performance.now();
  for (const c of chunks) await q.insertInbox(c.map((r) => ({ ...r })));
  const inboxAccepted = events / (ms(t) / 1000);
  t = performance.now();
  for (;;) {
    const claimed = await q.claim(claim, 60);
    if (claimed.length === 0) break;
    await db('error_event_inbox')
      .whereIn(
        'uid',
        claimed.map((r) => r.uid),
      )
      .delete();
  }
  const inboxDrained = events / (ms(t) / 1000);

  // pg-boss: the same rows as job data.
  const boss = createBoss(scratch.config, 'release', { useListenNotify: true, supervise: false, schedule: false });
  await boss.start();
  await boss.createQueue('bench.intake', { partition: true, notify: true, deleteAfterSeconds: 0 });
  t = performance.now();
  for (const c of chunks)
    await boss.insert(
      'bench.intake',
      c.map((r) => ({ data: r })),
    );
  const bossAccepted = events / (ms(t) / 1000);
  let done = 0;
  t = performance.now();
  await new Promise<void>((resolve) => {
    void boss.work(
      'bench.intake',
      { batchSize: claim, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true },
      async (jobs) => {
        done += jobs.length;
        if (done >= events) resolve();
      },
    );
  });
  const bossDrained = events / (ms(t) / 1000);
  await boss.stop({ graceful: false, close: true });

  report(
    `intake queue: ${events} sealed events (${rows[0]!.payload_sealed.length} characters each), batches of ${batch}, claims of ${claim}`,
    {
      'inbox: accepted events/s': inboxAccepted,
      'pg-boss: accepted events/s': bossAccepted,
      '  accepted, pg-boss / inbox': bossAccepted / inboxAccepted,
      'inbox: drained events/s (claim + delete)': inboxDrained,
      'pg-boss: drained events/s (fetch + complete)': bossDrained,
      '  drained, pg-boss / inbox': bossDrained / inboxDrained,
    },
  );
} finally {
  await db.destroy();
  await scratch.drop();
}

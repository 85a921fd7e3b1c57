// Retention's cost (docs/api.md "Retention"): the daily prune of N expired events, against a plain
// DELETE of as many rows of the same shape in the same run, and again with the table holding twice
// as many unexpired events, to show that the prune's time does not grow with the table.
// Env: DATABASE_URL; BENCH_RETENTION_EVENTS (expired events, 1000000).
import { keyringFromConfig } from '../src/crypto.ts';
import pg from 'pg';
import { createDb } from '../src/db.ts';
import { runMigrations } from '../src/migrate.ts';
import { pruneErrors } from '../src/domain/errors/retention/prune.ts';
import { createEnvWithKeys } from '../src/domain/tenancy/envs.ts';
import { ms, report, scratchDatabase } from './support.ts';

const n = Number(process.env.BENCH_RETENTION_EVENTS ?? 1_000_000);
const day = 86_400_000;

/** `count` events of one group received `ageDays` ago, spread over that day, 300-byte bodies. */
async function fill(url: string, envId: string, ageDays: number, count: number): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const group = `eg_bench${ageDays}`;
    await c.query(
      `insert into error_groups (id, env_id, fingerprint, title, etag, first_seen_time, last_seen_time, update_time)
       values ($1, $2, $1, 'Error: bench', 'e', now() - make_interval(days => $3), now() - make_interval(days => $3),
               now() - make_interval(days => $3)) on conflict do nothing`,
      [group, envId, ageDays],
    );
    const day0 = new Date(Math.floor((Date.now() - ageDays * day) / day) * day).toISOString();
    await c.query(
      `insert into error_events (uid, env_id, group_id, event_time, receive_time, body_deflated)
       select 'err_b' || $4 || '_' || i, $1, $2, t, t, convert_to(repeat('x', 300), 'UTF8')
         from generate_series(1, $3) i, lateral (select $5::timestamptz + make_interval(secs => i * 80000.0 / $3)) s(t)`,
      [envId, group, count, ageDays, day0],
    );
  } finally {
    await c.end();
  }
}

async function main(): Promise<void> {
  const scratch = await scratchDatabase();
  const url = scratch.config.DATABASE_URL;
  try {
    await runMigrations(scratch.config);
    const db = createDb(scratch.config, { poolMax: 4 });
    try {
      const env = await createEnvWithKeys(
        db,
        'orgs/bench/projects/retention/envs/prod',
        'test',
        keyringFromConfig(scratch.config),
      );
      // The days the events go in (a running service has one day a day to drop, as here).
      const days = () =>
        db.raw(
          "select cairn_error_event_partitions((now() at time zone 'UTC')::date - a, 1) from unnest(array[150, 100, 10]) a",
        );
      await days();
      const envId = env.env.id;

      // Baseline: DELETE of n rows from a day's partition (what a prune without partitions does).
      process.stdout.write(`filling ${n} rows for the DELETE baseline…\n`);
      await fill(url, envId, 150, n);
      let t = performance.now();
      const deleted = await db.raw(`delete from error_events where receive_time < now() - interval '140 days'`);
      const deleteMs = ms(t);

      // The prune, with n expired events and n unexpired ones, then with 2n unexpired.
      const runs: number[] = [];
      for (const kept of [n, 2 * n]) {
        process.stdout.write(`filling ${n} expired and ${kept} kept events…\n`);
        await db.raw('truncate error_events');
        // The previous run dropped the expired day: make it again.
        await days();
        await fill(url, envId, 100, n);
        await fill(url, envId, 10, kept);
        await db.raw('vacuum analyze error_events');
        t = performance.now();
        const result = await pruneErrors(db, new Date());
        runs.push(ms(t));
        if (result.deleted_events !== n) throw new Error(`the prune deleted ${result.deleted_events}, not ${n}`);
      }
      report(`retention: ${n} expired events`, {
        'DELETE baseline, rows': Number(deleted.rowCount ?? 0),
        'DELETE baseline, s': deleteMs / 1000,
        'prune, table holding n more, s': runs[0]! / 1000,
        'prune, table holding 2n more, s': runs[1]! / 1000,
        'prune / DELETE (lower is better)': runs[0]! / deleteMs,
        'prune time, 2n kept / n kept (flat ≈ 1.0)': runs[1]! / runs[0]!,
      });
    } finally {
      await db.destroy();
    }
  } finally {
    await scratch.drop();
  }
}

await main();

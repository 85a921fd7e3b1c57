// Takes over the jobs of a worker process that is gone, for queues that are not transactional:
// their handlers name their worker on the job (worker-queries.ts), and a key whose lock no session
// holds has no process behind it. Each such job is failed (a retry, fenced on the attempt its
// worker fetched) and made due at once, within about a second of the process dying instead of
// after pg-boss's heartbeat (10 s at least, plus a supervisor pass) or expiry. Failing a job whose
// worker is in fact alive (its liveness session was cut off, liveness.ts) runs it twice, which
// every handler allows (queue.ts).
import { fromKnex, type PgBoss } from 'pg-boss';
import type { Knex } from 'knex';
import { workerQueries, type WorkerClaim } from './worker-queries.ts';

/** Fails these claims (fenced on their attempts) in `trx`, and makes their retries due now. */
async function failAll(trx: Knex.Transaction, boss: PgBoss, claims: WorkerClaim[], why: string): Promise<void> {
  for (const name of new Set(claims.map((c) => c.name))) {
    const jobs = claims.filter((c) => c.name === name).map(({ id, retryCount }) => ({ id, retryCount }));
    await boss.fail(name, jobs, { message: why }, { db: fromKnex(trx) });
  }
  if (claims.length > 0) await workerQueries(trx).dueNow(claims.map((c) => c.id));
}

export async function takeOverGoneWorkers(
  db: Knex,
  boss: PgBoss,
  queues: string[],
  ownKey: number,
  graceSeconds = 2,
): Promise<WorkerClaim[]> {
  const taken: WorkerClaim[] = [];
  for (const key of await workerQueries(db).activeKeys(queues, ownKey)) {
    // One transaction per key: the key's lock is held while its jobs are failed, so two reapers
    // looking at once fail each job once (the second reads them again after the first commits).
    const found = await db.transaction(async (trx) => {
      const claims = await workerQueries(trx).claimsOfGone(queues, key);
      await failAll(trx, boss, claims, 'worker gone: its liveness lock was free');
      return claims;
    });
    taken.push(...found);
  }
  // A worker killed between its fetch and naming itself on the jobs (a few milliseconds, but
  // under load some batch is always in that window) left them unnamed.
  const unnamed = await db.transaction(async (trx) => {
    const claims = await workerQueries(trx).lockUnnamed(queues, graceSeconds);
    await failAll(trx, boss, claims, 'worker gone: it never named itself on the job');
    return claims;
  });
  return [...taken, ...unnamed];
}

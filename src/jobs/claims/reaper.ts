// Takes over the claims of a worker that died, every queue alike: each pass also takes over the
// jobs of other queues whose worker's liveness key is free (takeover.ts). A transactional handler
// locks its jobs' claim keys
// as its first statement (src/worker.ts), and the lock lives as long as the handler's transaction:
// when the worker's process dies, the kernel closes its connections and Postgres rolls the
// transaction back at once, freeing the locks. So an active job claimed a moment ago whose lock is
// free has no worker: the reaper fails it (a retry, as pg-boss's heartbeat would) within about a
// second, instead of after the heartbeat's 10 s (pg-boss's minimum) and a supervisor pass.
// A worker that is frozen or cut off from the network keeps its connection and its locks; the
// heartbeat still finds those. Failing a live job by mistake is safe too: pg-boss fences a
// transactional handler's commit on the attempt it claimed, so the late handler rolls back.
import { fromKnex, type PgBoss } from 'pg-boss';
import type { Knex } from 'knex';
import type { Logger } from '../../log.ts';
import { claimQueries } from './queries.ts';
import { takeOverGoneWorkers } from './takeover.ts';

export interface ClaimReaperOptions {
  /** Queues whose handlers lock their claims (transactional ones). */
  queues: string[];
  /**
   * Queues whose handlers name their worker on their jobs instead (takeover.ts), and this process's
   * own key (liveness.ts), never taken over by itself.
   */
  workers?: { queues: string[]; key: number };
  /** How often each worker looks. */
  intervalMs?: number;
  /**
   * A claim younger than this may not be locked yet: the lock is taken by the handler's
   * transaction, a few milliseconds after the claim commits.
   */
  graceSeconds?: number;
  /**
   * Wakes this process's workers of a queue. A retry becomes due silently (no NOTIFY), and an idle
   * worker's next poll can be 5 s away, so the reaper wakes its own workers when the retries it made
   * are due.
   */
  wake?: (queue: string) => void;
}

export interface ClaimReaper {
  /** One look: fails the unlocked claims and the jobs of gone workers, and returns how many. */
  pass(): Promise<number>;
  stop(): Promise<void>;
}

export function startClaimReaper(db: Knex, boss: PgBoss, log: Logger, options: ClaimReaperOptions): ClaimReaper {
  const { queues, workers, intervalMs = 1000, graceSeconds = 2, wake } = options;
  let running: Promise<number> | undefined;
  const wakes = new Set<NodeJS.Timeout>();

  const wakeWhenDue = async (name: string, ids: string[]) => {
    if (!wake) return;
    const due = new Set((await claimQueries(db).msUntilDue(ids)).map((ms) => Math.ceil(ms / 100) * 100));
    for (const ms of due) {
      const t = setTimeout(() => {
        wakes.delete(t);
        wake(name);
      }, ms);
      t.unref();
      wakes.add(t);
    }
  };

  const reported = async (orphans: { name: string; id: string }[]): Promise<number> => {
    for (const name of new Set(orphans.map((o) => o.name))) {
      const ids = orphans.filter((o) => o.name === name).map((o) => o.id);
      log.warn({ queue: name, jobs: ids.length }, 'took over the jobs of a worker that is gone');
      await wakeWhenDue(name, ids);
    }
    return orphans.length;
  };

  const pass = async (): Promise<number> => {
    const gone = workers?.queues.length
      ? await takeOverGoneWorkers(db, boss, workers.queues, workers.key, graceSeconds)
      : [];
    return (await reported(gone)) + (await reported(await claimPass()));
  };

  const claimPass = async (): Promise<{ name: string; id: string }[]> => {
    if (queues.length === 0) return [];
    const candidates = await claimQueries(db).activeSince(queues, graceSeconds);
    if (candidates.length === 0) return [];
    return db.transaction(async (trx) => {
      const found = await claimQueries(trx).lockUnheld(candidates);
      for (const name of new Set(found.map((o) => o.name))) {
        const jobs = found.filter((o) => o.name === name).map(({ id, retryCount }) => ({ id, retryCount }));
        await boss.fail(name, jobs, { message: 'worker gone: its claim lock was free' }, { db: fromKnex(trx) });
      }
      return found;
    });
  };

  const tick = () => {
    if (running) return;
    running = pass()
      .catch((err: unknown) => {
        log.warn({ err }, 'could not look for the claims of gone workers; the heartbeat still finds them');
        return 0;
      })
      .finally(() => (running = undefined));
  };
  // A worker with no queue of either kind has no claims to look for.
  const timer = queues.length > 0 || workers?.queues.length ? setInterval(tick, intervalMs).unref() : undefined;

  return {
    pass,
    async stop() {
      clearInterval(timer);
      await running;
      for (const t of wakes) clearTimeout(t);
    },
  };
}

// What a queue is: its payload schema and the pg-boss settings that make it fast, declared by each
// feature beside its code (`domain/<feature>/queues.ts`) with `defineQueue`, and assembled into the
// application's registry in src/queues.ts. Payloads carry ids, never rows or plaintext secrets.
// Handlers must be idempotent: pg-boss delivers at least once (a worker killed mid-job has its jobs
// taken over by another within ~1-3 s, src/jobs/claims/; a frozen one's after the heartbeat or
// expiry; and a worker whose liveness session was cut off may see its live jobs taken over and run
// twice), so each handler keys its writes on ids in the payload (docs/conventions.md "Jobs").
import type { Queue } from 'pg-boss';
import type { z } from 'zod';

/** A queue's settings besides its schema. */
export interface QueueOptions {
  /** Attempts after the first. */
  retryLimit?: number;
  /** Seconds before the first retry; doubled each time with retryBackoff. */
  retryDelay?: number;
  retryBackoff?: boolean;
  retryDelayMax?: number;
  /** A job active longer than this is considered lost (worker killed) and retried. */
  expireInSeconds?: number;
  /**
   * For long jobs: the worker refreshes the claim every half of this, and a claim not refreshed
   * for this long (worker killed) is failed and retried, however long `expireInSeconds` is.
   */
  heartbeatSeconds?: number;
  /** How long completed or failed jobs stay queryable. */
  deleteAfterSeconds?: number;
  /** How long a job may wait in the queue before it is given up. */
  retentionSeconds?: number;
  /** Its own table: keeps a busy queue from slowing every other (pg-boss partitioning). */
  partition?: boolean;
  /** Jobs fetched per round trip; the handler gets them together. */
  batchSize?: number;
  localConcurrency?: number;
  /**
   * At most this many jobs of one group (a job's `group.id`) active at once (pg-boss
   * `groupConcurrency`): one busy group cannot take all of a queue's workers. Checked per fetch
   * against the jobs active when that fetch began, so fetches at the same moment can each take a
   * group's last place (pg-boss #845: "overfetch is the same"); a handler that must hold the limit
   * exactly checks again (webhooks' slow lane: deliveries/batch.ts).
   */
  groupConcurrency?: number;
  policy?: Queue['policy'];
  /**
   * The handler runs in one transaction with its jobs' completion, handed to it as `tx`: its writes
   * commit only if this worker still holds the jobs' claim, so a job whose claim ran out while it
   * was being worked (and another worker took it) commits nothing twice (pg-boss `transactional`).
   */
  transactional?: boolean;
}

export interface QueueDef<S extends z.ZodType = z.ZodType> extends QueueOptions {
  schema: S;
}

export type Registry = Record<string, QueueDef>;

/**
 * One queue, as a registry of one: a feature spreads its queues into one object. Its options keep
 * their types, so code that sizes itself by a queue reads them (a bench's concurrency).
 */
export function defineQueue<const N extends string, S extends z.ZodType, O extends QueueOptions = object>(
  name: N,
  schema: S,
  options: O = {} as O,
): { [K in N]: { schema: S } & O } {
  return { [name]: { schema, ...options } } as { [K in N]: { schema: S } & O };
}

export function defineQueues<const R extends Registry>(defs: R): R {
  return defs;
}

/** The names of a registry's queues. */
export type QueueName<R extends Registry> = keyof R & string;

export const deadLetterName = (queue: string): string => `${queue}.dead`;

/**
 * A cron schedule (UTC), registered by every worker at start. pg-boss keeps one row per schedule
 * and its cron monitor sends each slot once, however many workers run.
 */
export interface ScheduleDef<N extends string = string> {
  queue: N;
  /** Distinguishes several schedules on one queue. */
  key: string;
  cron: string;
  data: Record<string, unknown>;
}

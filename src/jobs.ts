// The one registry of background jobs: queue name → payload schema, retry, dead letter, retention
// and the pg-boss settings that make it fast. Payloads carry ids, never rows or plaintext secrets
// (docs/conventions.md "Jobs"). Handlers must be idempotent: pg-boss delivers at least once (a worker killed
// mid-job has its jobs taken over by another within ~1-3 s, src/claims/; a frozen one's after the
// heartbeat or expiry; and a worker whose liveness session was cut off may see its live jobs
// taken over and run twice), so each handler keys its writes on ids in the payload.
import { PgBoss, fromKnex, type ConstructorOptions, type Db as BossDb, type Queue } from 'pg-boss';
import { z } from 'zod';
import type { Config } from './config.ts';
import { isTransaction, type Db } from './db.ts';
import { boundedPool } from './db-timeouts.ts';
import { ingestJobSchema } from './domain/errors/intake/job.ts';
import { traceCarrier, traceKey } from './telemetry/jobs.ts';

export interface QueueDef<S extends z.ZodType = z.ZodType> {
  schema: S;
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
   * At most this many jobs of one group (a job's `group.id`) active at once across every worker
   * (pg-boss `groupConcurrency`): one busy group cannot take all of a queue's workers.
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

export type Registry = Record<string, QueueDef>;

export function defineQueues<const R extends Registry>(defs: R): R {
  return defs;
}

export const deadLetterName = (queue: string): string => `${queue}.dead`;

/**
 * The application's queues. Each area adds its jobs here; `workers/handlers.ts` must hold a
 * handler for every one, or the worker refuses to start.
 */
/** One attempt of one webhook delivery, in either lane, and what both lanes keep alike. */
const deliveryAttempts = {
  schema: z.object({
    endpoint_id: z.string().regex(/^whep_[0-9a-z]{26}$/),
    message_id: z.string().regex(/^whmsg_[0-9a-z]{26}$/),
    attempt: z.number().int().min(1),
  }),
  partition: true,
  retryLimit: 10,
  retryDelay: 5,
  retryDelayMax: 300,
  expireInSeconds: 120,
  heartbeatSeconds: 10,
  // Longer than the retry schedule (27.6 h): an attempt's job id stays taken while its delivery
  // can still ask for it, so it is never queued twice.
  deleteAfterSeconds: 3 * 24 * 3600,
};

export const queues = defineQueues({
  // Error ingest (docs/queues.md). A job carries up to 50 accepted events, sealed (never
  // plaintext; domain/errors/intake/job.ts), so a fetch of 4 jobs is a bounded batch. Its
  // own partition keeps the busiest queue from slowing the others. The store commits with the
  // jobs' settlement (transactional), so each event is stored exactly once even when a job's claim
  // ran out while it was being worked. A killed worker's jobs are retried by another worker within
  // ~3 s (its claim locks free when its connections close, src/claims/), a frozen one's by the
  // heartbeat within ~10-20 s, never after a long expiry. Ten attempts with backoff up to 5 minutes (a source map store
  // outage is waited out), then the dead-letter queue, kept 30 days like every other. Stored jobs
  // are deleted in the store's transaction, so the queue never holds events already stored.
  'errors.ingest': {
    schema: ingestJobSchema,
    partition: true,
    retryLimit: 9,
    retryDelay: 1,
    retryDelayMax: 300,
    expireInSeconds: 15 * 60,
    heartbeatSeconds: 10,
    // Only failed jobs remain to be deleted (their events are in the dead-letter queue by then).
    deleteAfterSeconds: 3600,
    // Two fetches of 4 jobs in flight: at most ~400 events, as many as the worker held before the
    // move to pg-boss. Fetches of 16 held its peak RSS ~17 MB higher (314 against 297 MB in
    // bench/errors.ts's memory part, 50 releases' maps) for no more events/s.
    batchSize: 4,
    localConcurrency: 2,
    transactional: true,
  },
  // sentry-cli's artifact bundles (domain/errors/sentry/cli/assemble.ts): the bundle's
  // chunks read from the store, its maps and minified files stored. Idempotent on the assembly's
  // row; a store outage is waited out with backoff.
  'errors.assemble-bundle': {
    schema: z.object({ env_id: z.string(), checksum: z.string().regex(/^[0-9a-f]{40}$/) }),
    retryLimit: 8,
    retryDelay: 2,
    expireInSeconds: 600,
    deleteAfterSeconds: 3600,
  },
  // Daily: accepted event ids past their 90-day retention (domain/errors/intake/event-ids.ts).
  'errors.prune': { schema: z.object({}), retryLimit: 2 },
  // Every 5 minutes: each environment's pending count set to the events its queue holds
  // (intake/queries.ts reconcilePending). Deltas add unclamped, so a count a web process died before
  // writing (or a redrive's) would otherwise stay low until the daily prune: a 50,000 deficit let
  // 150,000 pend before captures were refused. Not on the worker's decrement: a count below zero
  // there is also the usual brief race (a worker stored a commit's events before the web counted
  // them) and set right there, the web's later count would stay as phantom events.
  'errors.reconcile-pending': { schema: z.object({}), retryLimit: 0, expireInSeconds: 600, deleteAfterSeconds: 3600 },
  // Every minute (pg-boss's clock sends each cron job once, whatever the number of workers): the
  // intake's table vacuumed when autovacuum has left it (intake/vacuum.ts).
  'errors.vacuum': { schema: z.object({}), retryLimit: 0, expireInSeconds: 600, deleteAfterSeconds: 3600 },
  // Identity. A sign-up job carries only the pending row's id: the password waits there,
  // sealed, and is erased once hashed. Handlers key their writes on the ids, so retries are safe.
  // Batches with burst: a queue of sign-ups drains without waiting a poll interval between jobs.
  'identity.sign-up': {
    schema: z.object({ pending_id: z.string().regex(/^signup_[0-9a-z]{26}$/) }),
    retryLimit: 8,
    retryDelay: 1,
    deleteAfterSeconds: 3600,
    batchSize: 10,
    localConcurrency: 2,
  },
  'identity.password-reset': {
    schema: z.object({ env_id: z.string(), email: z.string().max(320), redirect_url: z.string().max(2048).optional() }),
    retryLimit: 8,
    retryDelay: 1,
    deleteAfterSeconds: 3600,
    batchSize: 10,
  },
  'identity.breached-import': { schema: z.object({ import_id: z.string() }), retryLimit: 2, expireInSeconds: 3600 },
  // Daily: sign-in history older than 90 days, ended sessions, spent tickets and links.
  'identity.prune': { schema: z.object({}), retryLimit: 2 },
  // Hourly: outbox mail (no SMTP_URL) older than 7 days; its links are long spent (src/mail/outbox.ts).
  'mail.prune': { schema: z.object({}), retryLimit: 2 },
  // Backups. Capture and restore carry only ids; each takes its environment's advisory
  // lock and throws while another run holds it, so retries (with backoff) wait their turn. A dump
  // may run for hours: a killed worker's job is taken over within ~1-3 s (src/claims/takeover.ts),
  // a frozen one's by the heartbeat (within about two minutes), never by the expiry; the
  // redelivered job settles the orphan and cleans the bucket at once (backups.reap, if need be). The expiry is pg-boss's maximum, 24 h, the longest a single run may take.
  'backups.capture': {
    schema: z.object({ backup_id: z.string().regex(/^backup_[0-9a-z]{26}$/) }),
    retryLimit: 40,
    retryDelay: 15,
    retryDelayMax: 300,
    expireInSeconds: 24 * 3600,
    heartbeatSeconds: 120,
  },
  'backups.restore': {
    schema: z.object({ operation_id: z.string().regex(/^op_[0-9a-z]{26}$/) }),
    retryLimit: 40,
    retryDelay: 15,
    retryDelayMax: 300,
    expireInSeconds: 24 * 3600,
    heartbeatSeconds: 120,
  },
  // A drill restores into its own scratch database, so it takes no environment lock; the same
  // takeover finds a killed worker's drill, which then runs again from the start.
  'backups.drill': {
    schema: z.object({ operation_id: z.string().regex(/^op_[0-9a-z]{26}$/) }),
    retryLimit: 5,
    retryDelay: 60,
    expireInSeconds: 24 * 3600,
    heartbeatSeconds: 120,
  },
  'backups.drills-due': { schema: z.object({}), retryLimit: 2 },
  // Webhooks (domain/webhooks/). One job per attempt of one delivery, queued in the transaction
  // that wrote the event or settled the attempt before; a failed attempt queues the next itself
  // at the contract's schedule (schedule.ts), so pg-boss's own retries are only for a worker that
  // died or a database that failed mid-job (the attempt is then made again, same webhook-id). A
  // killed worker's attempts are taken over within ~1-3 s (src/claims/takeover.ts), a frozen one's
  // by the heartbeat within 10-20 s. Its own partition: a burst of
  // events waits here without slowing the other queues. The endpoint is the job's group: at most 4
  // attempts to one endpoint at once. Fetches of 4, sent together, with burst (a full fetch
  // fetches again at once): one backlogged endpoint drained at ~480/s in a measurement, against
  // ~1/s with fetches of 1, where every worker slept out the 5 s poll after each job and a NOTIFY
  // woke all of them for 4 jobs at most. A fetch ends with its slowest attempt, so only endpoints
  // that answer 2xx within a second wait here: an attempt that fails or takes longer moves its
  // endpoint to the slow lane below, and a new endpoint starts there. What a receiver that turns
  // slow can still hold is its attempts a worker already fetched (4 at once), for one timeout: the
  // rest of its queued attempts move to the slow lane with it (domain/webhooks/lanes.ts).
  'webhooks.deliver': {
    ...deliveryAttempts,
    batchSize: 4,
    localConcurrency: 8,
    groupConcurrency: 4,
  },
  // The slow lane (domain/webhooks/emit.ts): attempts to endpoints that are new, failing or slow
  // to answer. One attempt per fetch, so none waits behind another's timeout; the environment is
  // the group, so one tenant's dead receivers hold at most 2 attempts at once, on every worker together.
  'webhooks.deliver-slow': {
    ...deliveryAttempts,
    batchSize: 1,
    localConcurrency: 4,
    groupConcurrency: 2,
  },
  // Daily: deliveries and their attempts past 30 days, and messages no delivery needs.
  'webhooks.prune': { schema: z.object({}), retryLimit: 2 },
  // Every 10 minutes: deliveries whose job is gone queued again (domain/webhooks/sweep.ts).
  'webhooks.sweep': { schema: z.object({}), retryLimit: 1, deleteAfterSeconds: 3600 },
  'backups.schedule': { schema: z.object({ type: z.enum(['daily', 'weekly', 'monthly']) }), retryLimit: 5 },
  'backups.prune': { schema: z.object({}), retryLimit: 2 },
  'backups.reap': { schema: z.object({}), retryLimit: 1 },
});

export type AppRegistry = typeof queues;

/** Jobs of any registry: what a worker's context holds (its handlers' code runs for the app's registry). */
export type AnyJobs = Jobs<Registry>;

/**
 * Cron schedules (UTC), registered by every worker at start. pg-boss keeps one row per schedule
 * and its cron monitor sends each slot once, however many workers run.
 */
export interface ScheduleDef {
  queue: keyof AppRegistry & string;
  /** Distinguishes several schedules on one queue. */
  key: string;
  cron: string;
  data: Record<string, unknown>;
}

export const schedules: ScheduleDef[] = [
  { queue: 'errors.prune', key: 'daily', cron: '23 4 * * *', data: {} },
  { queue: 'errors.vacuum', key: 'every-minute', cron: '* * * * *', data: {} },
  { queue: 'errors.reconcile-pending', key: 'every-5-min', cron: '*/5 * * * *', data: {} },
  { queue: 'identity.prune', key: 'daily', cron: '17 4 * * *', data: {} },
  { queue: 'mail.prune', key: 'hourly', cron: '29 * * * *', data: {} },
  // Backups (SPEC "Limits"): daily, weekly on Sunday, monthly on the 1st, at 03:00 UTC unless an
  // environment chose another hour (`cairn backups schedule --at`): every hour, each slot takes the
  // environments whose hour it is (domain/backups/maintenance.ts scheduleSlot).
  { queue: 'backups.schedule', key: 'daily', cron: '0 * * * *', data: { type: 'daily' } },
  { queue: 'backups.schedule', key: 'weekly', cron: '0 * * * 0', data: { type: 'weekly' } },
  { queue: 'backups.schedule', key: 'monthly', cron: '0 * 1 * *', data: { type: 'monthly' } },
  { queue: 'backups.prune', key: 'hourly', cron: '41 * * * *', data: {} },
  { queue: 'backups.reap', key: 'every-5-min', cron: '*/5 * * * *', data: {} },
  { queue: 'backups.drills-due', key: 'hourly', cron: '29 * * * *', data: {} },
  { queue: 'webhooks.prune', key: 'daily', cron: '37 4 * * *', data: {} },
  { queue: 'webhooks.sweep', key: 'every-10-min', cron: '*/10 * * * *', data: {} },
];

export type Role = 'web' | 'worker' | 'release';

/** pg-boss for one process role; only the release phase migrates its schema. */
export function createBoss(
  config: Pick<Config, 'DATABASE_URL'>,
  role: Role,
  options: Partial<ConstructorOptions> = {},
): PgBoss {
  const boss = new PgBoss({
    connectionString: config.DATABASE_URL,
    schema: 'pgboss',
    application_name: `cairn-${role}-boss`,
    // The role's statement bounds (db-timeouts.ts) on pg-boss's pool too: pg-boss passes its options
    // to pg.Pool (pg-boss src/db.ts), so a fetch or a job's transaction on a frozen connection fails
    // and the job is retried, instead of hanging the worker. pg-pool destroys a client whose query
    // failed; BoundedClient destroys one that timed out inside a transaction.
    ...(boundedPool(role) as Partial<ConstructorOptions>),
    connectionTimeoutMillis: 5000,
    // The process's share of its connection budget comes in `options.max` (db.ts connectionShares).
    max: role === 'worker' ? 2 : 1,
    migrate: role === 'release',
    createSchema: role === 'release',
    // Only workers run maintenance and cron; web processes only insert jobs.
    supervise: role === 'worker',
    // The supervisor's monitor fails jobs whose heartbeat stopped (a frozen or cut-off worker; a
    // killed one's are retried sooner, src/claims/) and retries them: every 10 s, not the 60 s default.
    // One worker claims each queue's pass for all of them, so more workers add no load.
    superviseIntervalSeconds: 10,
    monitorIntervalSeconds: 10,
    schedule: role === 'worker',
    // Workers wake on NOTIFY instead of sleeping out the 2 s default poll.
    useListenNotify: role === 'worker',
    ...options,
  });
  // pg-boss re-emits its pool's errors on itself, and an EventEmitter with no 'error' listener
  // throws them, killing the process. Postgres ending an idle connection emits one (a restart, or
  // a DROP DATABASE … WITH (FORCE) racing stop(): pg-pool's end() resolves before its clients have
  // closed, brianc/node-postgres#2328). Calls still reject on their own; the web and worker add a
  // listener that logs.
  boss.on('error', () => undefined);
  return boss;
}

const queueDefaults = {
  retryLimit: 5,
  retryDelay: 2,
  retryBackoff: true,
  retryDelayMax: 600,
  expireInSeconds: 15 * 60,
  deleteAfterSeconds: 7 * 24 * 3600,
  retentionSeconds: 14 * 24 * 3600,
} satisfies Partial<QueueDef>;

function queueOptions(def: QueueDef, name: string): Omit<Queue, 'name'> {
  const o = { ...queueDefaults, ...def };
  return {
    policy: o.policy ?? 'standard',
    partition: o.partition ?? false,
    notify: true,
    retryLimit: o.retryLimit,
    retryDelay: o.retryDelay,
    retryBackoff: o.retryBackoff,
    // pg-boss accepts a cap only together with backoff.
    ...(o.retryBackoff ? { retryDelayMax: o.retryDelayMax } : {}),
    expireInSeconds: o.expireInSeconds,
    ...(o.heartbeatSeconds ? { heartbeatSeconds: o.heartbeatSeconds } : {}),
    deleteAfterSeconds: o.deleteAfterSeconds,
    retentionSeconds: o.retentionSeconds,
    deadLetter: deadLetterName(name),
  };
}

/** Release phase: create each queue and its dead-letter queue, or bring their settings up to date. */
export async function syncQueues(boss: PgBoss, registry: Registry): Promise<void> {
  for (const [name, def] of Object.entries(registry)) {
    const dead = deadLetterName(name);
    // Dead letters are kept for 30 days so an operator can inspect and re-drive them.
    const deadOptions = { notify: false, retentionSeconds: 30 * 24 * 3600, deleteAfterSeconds: 30 * 24 * 3600 };
    if (!(await boss.getQueue(dead))) await boss.createQueue(dead, deadOptions);
    const { policy: _p, partition: _part, ...mutable } = queueOptions(def, name);
    if (await boss.getQueue(name)) await boss.updateQueue(name, mutable);
    else await boss.createQueue(name, queueOptions(def, name));
  }
}

/** The payload as stored: with the queuing code's trace context when it is traced (telemetry/jobs.ts). */
function withTrace(data: object, carrier: ReturnType<typeof traceCarrier>): object {
  return carrier ? { ...data, [traceKey]: carrier } : data;
}

/** pg-boss statements run on the caller's knex transaction, so a rollback takes the job with it. */
function bossDbFor(db: Db): BossDb | undefined {
  return isTransaction(db) ? fromKnex(db) : undefined;
}

export interface EnqueueOptions {
  startAfter?: Date | number;
  singletonKey?: string;
  /** A deterministic id makes a re-sent job a no-op (pg-boss ignores a duplicate id). */
  id?: string;
}

export class Jobs<R extends Registry = AppRegistry> {
  readonly boss: PgBoss;
  readonly registry: R;

  constructor(boss: PgBoss, registry: R) {
    this.boss = boss;
    this.registry = registry;
  }

  /** Validates the payload against the queue's schema and inserts the job on `db` (pass the transaction). */
  async enqueue<N extends keyof R & string>(
    db: Db,
    name: N,
    payload: z.input<R[N]['schema']>,
    options: EnqueueOptions = {},
  ): Promise<string> {
    const data = withTrace(this.registry[name]!.schema.parse(payload) as object, traceCarrier());
    const bossDb = bossDbFor(db);
    const id = await this.boss.send(name, data, { ...options, ...(bossDb ? { db: bossDb } : {}) });
    if (!id) throw new Error(`job ${name} was not created`);
    return id;
  }

  /**
   * Many jobs in one statement, on `db`: the caller's knex transaction, a connection of its pool,
   * or a raw transaction's statements (db.ts rawTransaction).
   */
  async enqueueMany<N extends keyof R & string>(
    db: Db | BossDb,
    name: N,
    payloads: z.input<R[N]['schema']>[],
  ): Promise<void> {
    const schema = this.registry[name]!.schema;
    const carrier = traceCarrier();
    const jobs = payloads.map((p) => ({ data: withTrace(schema.parse(p) as object, carrier) }));
    await this.boss.insert(name, jobs, { db: 'executeSql' in db ? db : fromKnex(db) });
  }

  /**
   * Many jobs with their own options in one statement, on `db` as enqueueMany takes it. A job whose
   * id exists already is skipped (pg-boss inserts with ON CONFLICT DO NOTHING).
   */
  async enqueueJobs<N extends keyof R & string>(
    db: Db | BossDb,
    name: N,
    jobs: { data: z.input<R[N]['schema']>; id?: string; startAfter?: Date; group?: { id: string } }[],
  ): Promise<void> {
    if (jobs.length === 0) return;
    const schema = this.registry[name]!.schema;
    const carrier = traceCarrier();
    const rows = jobs.map(({ data, ...options }) => ({
      ...options,
      data: withTrace(schema.parse(data) as object, carrier),
    }));
    await this.boss.insert(name, rows, { db: 'executeSql' in db ? db : fromKnex(db) });
  }
}

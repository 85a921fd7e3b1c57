// Queuing jobs: a payload is checked against its queue's schema and inserted on the caller's
// database handle, so a job queued inside a transaction commits or rolls back with it.
import { fromKnex, type Db as BossDb, type PgBoss } from 'pg-boss';
import type { z } from 'zod';
import { isTransaction, type Db } from '../db.ts';
import { traceCarrier, traceKey } from '../telemetry/jobs.ts';
import type { Registry } from './queue.ts';

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

/**
 * Jobs for the queues of `R`. A feature types the jobs it queues with its own queues
 * (`Jobs<typeof backupQueues>`); the application's, for every queue, is `AppJobs` (src/queues.ts).
 * The registry is held untyped, so jobs for more queues serve where fewer are named.
 */
export class Jobs<R extends Registry = Registry> {
  readonly boss: PgBoss;
  readonly registry: Registry;

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

/** Jobs of any registry: what a worker's context holds (its handlers' code runs for the app's registry). */
export type AnyJobs = Jobs<Registry>;

// What an operator watches, in one shape for Prometheus (/metrics) and for a person
// (`cairn admin status`): the error intake's depth and age, the busiest environments against their
// backpressure bound, dead letters, each job queue's depth,
// and backups whose latest restore drill failed. docs/operations.md says what each means.
import type { PgBoss } from 'pg-boss';
import type { Db } from '../../db.ts';
import { backupQueries } from '../backups/queries.ts';
import { operationsQueries, type EnvironmentIntake, type IntakeFigures } from './queries.ts';

/** How many environments the status names: the busiest (a scrape's label count stays bounded). */
export const busiestShown = 20;

export interface QueueFigures {
  name: string;
  /** Waiting to run now or later (retries and delayed jobs included). */
  queued: number;
  active: number;
  /** Failed jobs still retained (a rolling count, bounded by the queue's retention). */
  failed: number;
}

export interface OperationalStatus {
  intake: IntakeFigures;
  /** The environments with the most events pending, busiest first (at most `busiestShown`). */
  environments: EnvironmentIntake[];
  dead_letters: number;
  queues: QueueFigures[];
  backup_drills_failed: number;
}

/** The counts pg-boss keeps per queue (refreshed by the workers' monitor, every few seconds). */
export async function queueFigures(boss: PgBoss, names: readonly string[]): Promise<QueueFigures[]> {
  const queues = await boss.getQueues([...names]);
  return queues
    .map((q) => ({ name: q.name, queued: q.queuedCount, active: q.activeCount, failed: q.failedCount }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export async function readStatus(db: Db, boss: PgBoss, queueNames: readonly string[]): Promise<OperationalStatus> {
  const ops = operationsQueries(db);
  const [intake, environments, deadLetters, queues, drills] = await Promise.all([
    ops.intake(),
    ops.busiestEnvironments(busiestShown),
    ops.deadLetters(),
    queueFigures(boss, queueNames),
    backupQueries(db).countFailedDrills(),
  ]);
  return { intake, environments, dead_letters: deadLetters, queues, backup_drills_failed: drills };
}

// The release phase's part of the queues: each queue of a registry created in pg-boss with its
// settings and its dead-letter queue, or brought up to date.
import type { PgBoss, Queue } from 'pg-boss';
import { deadLetterName, type QueueDef, type Registry } from './queue.ts';

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

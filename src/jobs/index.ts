// The queue runtime, below every feature: queue declarations, pg-boss per process role, the
// release phase's queue sync and queuing jobs. Features declare their queues with `defineQueue`;
// src/queues.ts assembles the application's registry. Claims (claims/) are the worker's.
export { createBoss, type Role } from './boss.ts';
export { Jobs, type AnyJobs, type EnqueueOptions } from './jobs.ts';
export {
  deadLetterName,
  defineQueue,
  defineQueues,
  type QueueDef,
  type QueueName,
  type QueueOptions,
  type Registry,
  type ScheduleDef,
} from './queue.ts';
export { syncQueues } from './sync.ts';

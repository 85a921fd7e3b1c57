// Jobs for domain code called directly by tests that have no webhook endpoint: an action writes no
// event then (src/domain/webhooks/outbox/emit.ts answers before it queues anything), so this boss is never
// started. A test that adds an endpoint passes a started one instead.
import type { Config } from '../../src/config.ts';
import { createBoss, Jobs } from '../../src/jobs/index.ts';
import { queues } from '../../src/queues.ts';

export function idleJobs(config: Pick<Config, 'DATABASE_URL'>): Jobs {
  return new Jobs(createBoss(config, 'web'), queues);
}

// Mail's queue and its schedule, assembled with the others in src/queues.ts.
import { z } from 'zod';
import { defineQueue, type QueueName, type ScheduleDef } from '../jobs/index.ts';

export const mailQueues = {
  // Hourly: outbox mail (no SMTP_URL) older than 7 days; its links are long spent (src/mail/outbox.ts).
  ...defineQueue('mail.prune', z.object({}), { retryLimit: 2 }),
};

export const mailSchedules: ScheduleDef<QueueName<typeof mailQueues>>[] = [
  { queue: 'mail.prune', key: 'hourly', cron: '29 * * * *', data: {} },
];

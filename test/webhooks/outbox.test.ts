// The outbox: an event is written with its action and vanishes with its rollback; a delivery whose
// job is gone is picked up by the sweep; deliveries are pruned after 30 days.
import { fromKnex, type PgBoss } from 'pg-boss';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import { emit } from '../../src/domain/webhooks/outbox/emit.ts';
import { createEndpoint } from '../../src/domain/webhooks/endpoints/endpoints.ts';
import { sweepDeliveries } from '../../src/domain/webhooks/outbox/sweep.ts';
import { createBoss, Jobs } from '../../src/jobs/index.ts';
import { queues } from '../../src/queues.ts';
import type { WorkerHandle } from '../../src/worker.ts';
import { createLogger } from '../../src/log.ts';
import { webhooksPrune } from '../../workers/webhooks-prune.ts';
import { createHarness, createTestEnv, sqlNumber, type Harness } from '../support/harness.ts';
import { startReceiver, startWebhookWorker, type Receiver } from './support.ts';
import { eventually } from '../support/probes.ts';

let h: Harness;
let boss: PgBoss;
let jobs: Jobs;

beforeAll(async () => {
  h = await createHarness();
  boss = createBoss(h.config, 'web');
  await boss.start();
  jobs = new Jobs(boss, queues);
});

afterAll(async () => {
  await boss?.stop({ graceful: false, close: true });
  await h?.close();
});

async function withEndpoint(): Promise<{ envId: string; endpointId: string; receiver: Receiver }> {
  const env = await createTestEnv(h.db);
  const receiver = await startReceiver();
  const { row } = await createEndpoint(
    { config: h.config, db: h.db },
    { id: env.env.id, mode: 'test' },
    { url: receiver.url, event_types: ['*'] },
  );
  return { envId: env.env.id, endpointId: row.id, receiver };
}

const queued = (h: Harness) => sqlNumber(h.db, "select count(*) from pgboss.job where name like 'webhooks.deliver%'");

it('an event written in a transaction that rolls back leaves no message, delivery or job', async () => {
  const { envId, receiver } = await withEndpoint();
  try {
    const jobsBefore = await queued(h);
    await expect(
      h.db.transaction(async (trx) => {
        await emit(fromKnex(trx), jobs, [{ envId, type: 'end_user.created', subject: 'eu_x', data: { id: 'eu_x' } }]);
        expect(await sqlNumber(trx, 'select count(*) from webhook_deliveries')).toBeGreaterThan(0);
        throw new Error('the action failed after its event was written');
      }),
    ).rejects.toThrow(/action failed/);
    expect(await h.db('webhook_messages').where({ env_id: envId })).toEqual([]);
    expect(await h.db('webhook_deliveries').where({ env_id: envId })).toEqual([]);
    expect(await queued(h)).toBe(jobsBefore);
  } finally {
    await receiver.close();
  }
});

it('a delivery whose job is gone, and a lane whose head was pruned, are delivered after the sweep', async () => {
  const { envId, endpointId, receiver } = await withEndpoint();
  let worker: WorkerHandle<Record<string, never>> | undefined;
  try {
    const a = await createEndUser({ db: h.db, jobs }, envId, { email: 'a@example.com' });
    const b = await createEndUser({ db: h.db, jobs }, envId, { email: 'b@example.com' });
    // Two messages about one user: the second waits behind the first.
    await h.db.transaction(async (trx) =>
      emit(fromKnex(trx), jobs, [{ envId, type: 'end_user.deleted', subject: b.id, data: { id: b.id } }]),
    );
    expect(
      (await h.db('webhook_deliveries').where({ endpoint_id: endpointId }).orderBy('seq')).map((d) => d.state),
    ).toEqual(['pending', 'pending', 'waiting']);
    // The jobs are lost (as if pg-boss had given them up), and b's first message was pruned.
    await h.db.raw("delete from pgboss.job where name like 'webhooks.deliver%'");
    const hoursAgo = new Date(Date.now() - 2 * 3600_000);
    await h.db('webhook_deliveries').where({ endpoint_id: endpointId }).update({
      next_attempt_time: hoursAgo,
      create_time: hoursAgo,
    });
    await h.db('webhook_deliveries').where({ endpoint_id: endpointId, subject: b.id, state: 'pending' }).delete();

    const swept = await sweepDeliveries({ db: h.db, jobs });
    expect(swept).toEqual({ requeued: 1, released: 1 });
    worker = (await startWebhookWorker(h)) as unknown as WorkerHandle<Record<string, never>>;
    const got = await receiver.waitFor(2);
    expect(got.map((r) => JSON.parse(r.body).type).sort()).toEqual(['end_user.created', 'end_user.deleted']);
    expect(JSON.parse(got.find((r) => r.body.includes('deleted'))!.body).data).toEqual({ id: b.id });
    expect(JSON.parse(got.find((r) => r.body.includes('created'))!.body).data).toMatchObject({ id: a.id });
    await eventually(async () =>
      (await h.db('webhook_deliveries').where({ endpoint_id: endpointId })).every((d) => d.state === 'succeeded'),
    );
    // Swept again at once: nothing is owed any more.
    expect(await sweepDeliveries({ db: h.db, jobs })).toEqual({ requeued: 0, released: 0 });
  } finally {
    await worker?.stop();
    await receiver.close();
  }
});

it('the sweep leaves alone a delivery whose job is still queued, however late', async () => {
  const { envId, endpointId, receiver } = await withEndpoint();
  try {
    await createEndUser({ db: h.db, jobs }, envId, { email: 'queued@example.com' });
    await h
      .db('webhook_deliveries')
      .where({ endpoint_id: endpointId })
      .update({ next_attempt_time: new Date(Date.now() - 5 * 3600_000) });
    const jobsBefore = await queued(h);
    expect(await sweepDeliveries({ db: h.db, jobs })).toEqual({ requeued: 0, released: 0 });
    expect(await queued(h)).toBe(jobsBefore);
  } finally {
    await receiver.close();
  }
});

it('deliveries and their attempts are kept 30 days, then pruned with their messages', async () => {
  const { envId, endpointId, receiver } = await withEndpoint();
  try {
    await createEndUser({ db: h.db, jobs }, envId, { email: 'old@example.com' });
    await createEndUser({ db: h.db, jobs }, envId, { email: 'new@example.com' });
    const [old] = await h.db('webhook_deliveries').where({ endpoint_id: endpointId }).orderBy('seq');
    await h.db('webhook_attempts').insert({
      endpoint_id: endpointId,
      message_id: old.message_id,
      number: 1,
      time: new Date(),
      status_code: 200,
      duration_ms: 3,
    });
    const monthAgo = new Date(Date.now() - 31 * 24 * 3600_000);
    await h.db('webhook_deliveries').where({ message_id: old.message_id }).update({ create_time: monthAgo });
    await h.db('webhook_messages').where({ id: old.message_id }).update({ create_time: monthAgo });

    await webhooksPrune([], {
      db: h.db,
      log: createLogger({ name: 'test', level: 'silent' }),
    } as unknown as Parameters<typeof webhooksPrune>[1]);
    expect(await h.db('webhook_messages').where({ id: old.message_id })).toEqual([]);
    expect(await h.db('webhook_attempts').where({ message_id: old.message_id })).toEqual([]);
    expect(await h.db('webhook_deliveries').where({ endpoint_id: endpointId })).toHaveLength(1);
  } finally {
    await receiver.close();
  }
});

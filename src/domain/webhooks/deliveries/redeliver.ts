// Redelivery (docs/api.md "Webhooks"): one more attempt of a settled delivery, the same webhook-id
// and body, signed anew. It is a single attempt, not a new retry schedule, and it does not hold
// back later messages about the same resource. A delivery still pending has an attempt coming.
import type { Knex } from 'knex';
import { AppError } from '../../../app-error.ts';
import type { AnyJobs as Jobs } from '../../../jobs/index.ts';
import { enqueueAttempts } from '../outbox/emit.ts';
import { requireEndpoint } from '../endpoints/endpoints.ts';
import { findDelivery, listAttempts, markRedelivery, type AttemptRow, type DeliveryRow } from './queries.ts';

export async function redeliver(
  deps: { db: Knex; jobs: Jobs },
  envId: string,
  endpointId: string,
  messageId: string,
): Promise<{ delivery: DeliveryRow; attempts: AttemptRow[] }> {
  const endpoint = await requireEndpoint(deps.db, envId, endpointId);
  await deps.db.transaction(async (trx) => {
    const current = await findDelivery(trx, endpoint.id, messageId);
    if (!current) throw new AppError('not_found', `no delivery ${messageId} to endpoint ${endpoint.id}`);
    if (endpoint.state === 'disabled')
      throw new AppError('INVALID_STATE', 'the endpoint is disabled; enable it (PATCH state) before redelivering', {
        details: { state: 'disabled' },
      });
    const count = await markRedelivery(trx, endpoint.id, messageId);
    if (count === undefined)
      throw new AppError('INVALID_STATE', 'this delivery is pending: an attempt is still to come', {
        details: { state: 'pending' },
      });
    await enqueueAttempts(trx, deps.jobs, [
      {
        endpoint_id: endpoint.id,
        message_id: messageId,
        attempt: count + 1,
        env_id: endpoint.env_id,
        slow: endpoint.slow,
      },
    ]);
  });
  const delivery = await findDelivery(deps.db, endpoint.id, messageId);
  // The endpoint was deleted in the meantime.
  if (!delivery) throw new AppError('not_found', `no delivery ${messageId} to endpoint ${endpoint.id}`);
  return { delivery, attempts: await listAttempts(deps.db, endpoint.id, [messageId]) };
}

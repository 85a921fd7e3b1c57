// The webhook events of end users (docs/api.md "Webhooks"): `end_user.created` from every way a
// user comes to be (the API, sign-up, a first social sign-in) and `end_user.deleted`, each on the
// transaction that made the change.
import type { Knex } from 'knex';
import { fromKnex } from 'pg-boss';
import { endUserCreatedEvent, endUserDeletedEvent } from '../present.ts';
import type { AnyJobs as Jobs } from '../../../jobs/index.ts';
import { emit, wanted } from '../../webhooks/outbox/emit.ts';
import { tenancyQueries } from '../../tenancy/queries.ts';
import { usersQueries } from './queries.ts';

async function envName(trx: Knex.Transaction, envId: string): Promise<string> {
  return (await tenancyQueries(trx).envById(envId))!.name;
}

export async function emitUserCreated(trx: Knex.Transaction, jobs: Jobs, envId: string, userId: string): Promise<void> {
  const tx = fromKnex(trx);
  if (!(await wanted(tx, [envId], ['end_user.created']))) return;
  const user = await usersQueries(trx).userById(envId, userId);
  if (user) await emit(tx, jobs, [endUserCreatedEvent({ id: envId, name: await envName(trx, envId) }, user)]);
}

export async function emitUserDeleted(trx: Knex.Transaction, jobs: Jobs, envId: string, userId: string): Promise<void> {
  const tx = fromKnex(trx);
  if (!(await wanted(tx, [envId], ['end_user.deleted']))) return;
  await emit(tx, jobs, [endUserDeletedEvent({ id: envId, name: await envName(trx, envId) }, userId)]);
}

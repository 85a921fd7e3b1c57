// An environment's webhook endpoints (docs/api.md "Webhooks"). The signing secret is made here,
// sealed with CAIRN_ENCRYPTION_KEY (attempts must sign with it) and shown only in the answers of
// create and rotate. A rotation keeps the previous secret for 24 hours: every message then carries
// both signatures, so a receiver can switch secrets without refusing a message.
import type { Knex } from 'knex';
import { keyringFromConfig, seal } from '../../../crypto.ts';
import type { Config } from '../../../config.ts';
import { AppError } from '../../../app-error.ts';
import { newId } from '../../../ids.ts';
import type { EnvMode } from '../../tenancy/keys.ts';
import { newSecret } from './sign.ts';
import type { Resolver } from '../../../egress/addresses.ts';
import { targetRule } from '../../../egress/target-rule.ts';
import { checkTarget } from './targets.ts';
import { lockEnv } from '../../tenancy/queries.ts';
import {
  countEndpoints,
  findEndpoint,
  findEndpointForUpdate,
  insertEndpoint,
  patchEndpoint,
  removeEndpoint,
  type EndpointRow,
  type EndpointState,
} from './queries.ts';

/** Endpoints per environment: Svix and Clerk stop near here too; a list with more is a mistake. */
export const maxEndpoints = 50;
export const rotationOverlapMs = 24 * 3600 * 1000;

export const secretContext = (endpointId: string): string => `webhook-secret:${endpointId}`;

export interface EndpointDeps {
  config: Config;
  db: Knex;
  resolve?: Resolver;
}

export interface EndpointInput {
  url: string;
  event_types: string[];
  description?: string | undefined;
}

export async function createEndpoint(
  deps: EndpointDeps,
  env: { id: string; mode: EnvMode },
  input: EndpointInput,
): Promise<{ row: EndpointRow; secret: string }> {
  const url = await checkTarget(input.url, targetRule(deps.config, env.mode), deps.resolve);
  const id = newId('whep');
  const secret = newSecret();
  const row = await deps.db.transaction(async (trx) => {
    // Counted under the environment's row lock, so parallel creates cannot pass the cap together;
    // no key update, so the environment's other writes (their foreign keys' key-share) go on.
    await lockEnv(trx, env.id, 'no key update');
    if ((await countEndpoints(trx, env.id)) >= maxEndpoints)
      throw new AppError('conflict', `this environment has ${maxEndpoints} webhook endpoints; delete one first`);
    return insertEndpoint(trx, {
      id,
      env_id: env.id,
      url,
      event_types: input.event_types,
      description: input.description ?? '',
      secret_sealed: seal(keyringFromConfig(deps.config), secret, secretContext(id)),
    });
  });
  return { row, secret };
}

export async function requireEndpoint(db: Knex, envId: string, id: string): Promise<EndpointRow> {
  const row = await findEndpoint(db, envId, id);
  if (!row) throw new AppError('not_found', `no webhook endpoint ${id} in this environment`);
  return row;
}

export interface EndpointPatch {
  url?: string | undefined;
  event_types?: string[] | undefined;
  description?: string | undefined;
  state?: EndpointState | undefined;
}

export async function updateEndpoint(
  deps: EndpointDeps,
  env: { id: string; mode: EnvMode },
  id: string,
  patch: EndpointPatch,
): Promise<EndpointRow> {
  await requireEndpoint(deps.db, env.id, id);
  // Resolved before the transaction: a slow DNS answer holds no row lock.
  const url =
    patch.url === undefined ? undefined : await checkTarget(patch.url, targetRule(deps.config, env.mode), deps.resolve);
  return deps.db.transaction(async (trx) => {
    const current = await findEndpointForUpdate(trx, env.id, id);
    if (!current) throw new AppError('not_found', `no webhook endpoint ${id} in this environment`);
    const changes: Partial<EndpointRow> = {};
    if (url !== undefined) changes.url = url;
    if (patch.event_types !== undefined) changes.event_types = patch.event_types;
    if (patch.description !== undefined) changes.description = patch.description;
    // Only a change of state resets the failure record: enabling an enabled endpoint keeps it.
    if (patch.state === 'enabled' && current.state !== 'enabled')
      Object.assign(changes, { state: 'enabled', disabled_reason: null, failing_since: null });
    if (patch.state === 'disabled' && current.state !== 'disabled')
      Object.assign(changes, { state: 'disabled', disabled_reason: 'disabled through the API' });
    if (Object.keys(changes).length === 0) return current;
    return (await patchEndpoint(trx, env.id, id, changes))!;
  });
}

export async function rotateSecret(
  deps: EndpointDeps,
  envId: string,
  id: string,
  now: Date = new Date(),
): Promise<{ row: EndpointRow; secret: string }> {
  const secret = newSecret();
  return deps.db.transaction(async (trx) => {
    const current = await findEndpointForUpdate(trx, envId, id);
    if (!current) throw new AppError('not_found', `no webhook endpoint ${id} in this environment`);
    // The secret being replaced signs alongside for 24 hours. A second rotation within them
    // replaces the older one at once: a message carries two signatures at most.
    const row = await patchEndpoint(trx, envId, id, {
      secret_sealed: seal(keyringFromConfig(deps.config), secret, secretContext(id)),
      previous_secret_sealed: current.secret_sealed,
      previous_secret_expire_time: new Date(now.getTime() + rotationOverlapMs),
    });
    return { row: row!, secret };
  });
}

export async function deleteEndpoint(db: Knex, envId: string, id: string): Promise<void> {
  const deleted = await db.transaction((trx) => removeEndpoint(trx, envId, id));
  if (!deleted) throw new AppError('not_found', `no webhook endpoint ${id} in this environment`);
}

// Sentry client keys (docs/api.md "Sentry compatibility"): list, create and revoke an
// environment's DSNs. An environment holds at most 50 keys that are not revoked: a DSN is
// per application, not per deploy, and a list with no pages must stay short.
import { keyringFromConfig } from '../../../crypto.ts';
import { createClientKey, presentClientKey } from '../../../domain/errors/sentry/client-keys.ts';
import { clientKeyQueries } from '../../../domain/errors/sentry/queries.ts';
import { lockEnv } from '../../../domain/tenancy/queries.ts';
import { AppError } from '../../../app-error.ts';
import { defineRoute } from '../../../http/route.ts';
import {
  clientKeyBody,
  clientKeyList,
  clientKeyParams,
  clientKeyResource,
  envParams,
} from '../../../contract/sentry.ts';
import type { AppDeps } from '../../../http/context.ts';
import type { ClientKeyRow } from '../../../domain/errors/sentry/queries.ts';
import { secretKey } from '../route-parts.ts';

const path = '/v1/orgs/{org}/projects/{project}/envs/{env}/client_keys';
const maxKeys = 50;

const view = async (deps: AppDeps, envId: string, rows: ClientKeyRow[]) => {
  const n = await clientKeyQueries(deps.db).projectNumber(envId);
  const keyring = keyringFromConfig(deps.config);
  return rows.map((r) => presentClientKey(r, keyring, deps.config.CAIRN_BASE_URL, n));
};

export const listClientKeys = defineRoute({
  method: 'get',
  path,
  operationId: 'listClientKeys',
  summary: "The environment's Sentry client keys (DSNs) that are not revoked, oldest first",
  ...secretKey('Error tracking', 'observability:read'),
  params: envParams,
  response: { status: 200, description: 'The keys', schema: clientKeyList },
  async handle({ principal, deps }) {
    const rows = await clientKeyQueries(deps.db).list(principal.envId);
    return { client_keys: await view(deps, principal.envId, rows) };
  },
});

export const createClientKeyRoute = defineRoute({
  method: 'post',
  path,
  operationId: 'createClientKey',
  summary: 'A new Sentry client key (DSN), optionally with its own rate limit',
  ...secretKey('Error tracking', 'observability:write'),
  params: envParams,
  body: clientKeyBody,
  example: { rate_limit: { count: 600, window_seconds: 60 } },
  response: { status: 201, description: 'The new key', schema: clientKeyResource },
  async handle({ body, principal, deps }) {
    return deps.db.transaction(async (trx) => {
      // Counted under a lock on the environment's row, so parallel creates cannot pass the cap together.
      await lockEnv(trx, principal.envId, 'update');
      if ((await clientKeyQueries(trx).list(principal.envId)).length >= maxKeys)
        throw new AppError('conflict', `this environment has ${maxKeys} client keys; revoke one before making another`);
      const { row } = await createClientKey(trx, keyringFromConfig(deps.config), principal.envId, body?.rate_limit);
      const [key] = await view({ ...deps, db: trx }, principal.envId, [row]);
      return key!;
    });
  },
});

export const revokeClientKey = defineRoute({
  method: 'delete',
  path: `${path}/{client_key}`,
  operationId: 'revokeClientKey',
  summary: 'Revoke a client key: its events are refused (401) within 2 seconds',
  ...secretKey('Error tracking', 'observability:write'),
  params: clientKeyParams,
  response: { status: 200, description: 'The revoked key', schema: clientKeyResource },
  async handle({ params, principal, deps }) {
    const row = await clientKeyQueries(deps.db).revoke(principal.envId, params.client_key);
    if (!row) throw new AppError('not_found', `no client key ${params.client_key} in this environment`);
    const [key] = await view(deps, principal.envId, [row]);
    return key!;
  },
});

export const clientKeyRoutes = [listClientKeys, createClientKeyRoute, revokeClientKey];

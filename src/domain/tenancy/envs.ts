// Creating environments and their keys: the operator's side of tenancy (the `cairn admin` commands
// and the embedded demo). Plaintext keys are returned once and never stored.
import type { Knex } from 'knex';
import type { Keyring } from '../../crypto.ts';
import { createClientKey, openPublicKey } from '../errors/sentry/client-keys.ts';
import { clientKeyQueries } from '../errors/sentry/queries.ts';
import { AppError } from '../../app-error.ts';
import {
  generateKey,
  hashKey,
  keyHint,
  secretScopes,
  type EnvMode,
  type KeyKind,
  type Scope,
  type SecretScope,
} from './keys.ts';
import { parseEnvName, type EnvPath } from './names.ts';
import { tenancyQueries, type EnvRow, type KeyRow } from './queries.ts';

export interface CreatedKey {
  key: KeyRow;
  token: string;
}

export async function createKey(
  db: Knex | Knex.Transaction,
  env: EnvRow,
  kind: KeyKind,
  scopes?: readonly string[],
): Promise<CreatedKey> {
  const chosen: Scope[] = kind === 'publishable' ? ['auth:public'] : checkScopes(scopes ?? secretScopes);
  const token = generateKey(kind, env.mode);
  const key = await tenancyQueries(db).insertKey({
    env_id: env.id,
    kind,
    token_hash: hashKey(token),
    hint: keyHint(token),
    scopes: chosen,
  });
  return { key, token };
}

export function checkScopes(scopes: readonly string[]): SecretScope[] {
  const unknown = scopes.filter((s) => !(secretScopes as readonly string[]).includes(s));
  if (unknown.length > 0 || scopes.length === 0) {
    throw new AppError(
      'invalid_request',
      `unknown scope ${unknown.join(', ') || '(none given)'}; choose from ${secretScopes.join(' ')}`,
      {
        details: { unknown_scopes: unknown },
      },
    );
  }
  return [...new Set(scopes)] as SecretScope[];
}

export interface CreatedEnv {
  env: EnvRow;
  created: boolean;
  publishableKey: string;
  secretKey: string;
  /** The environment's first Sentry client key (made with it), for its DSN. */
  clientKey: { id: string; publicKey: string; projectNumber: string };
}

/** The parts of an environment's name, or 400 saying what a name looks like. */
export function requireEnvPath(name: string): EnvPath {
  const path = parseEnvName(name);
  if (!path) {
    throw new AppError(
      'invalid_request',
      `"${name}" is not an environment name; use orgs/{org}/projects/{project}/envs/{env} with lower-case letters, digits and dashes`,
    );
  }
  return path;
}

/**
 * `cairn admin env create`: the org, project and env where missing, and a fresh key pair. A new
 * environment also gets its Sentry client key; an existing one keeps the DSN its SDKs already use.
 */
export async function createEnvWithKeys(db: Knex, name: string, mode: EnvMode, keyring: Keyring): Promise<CreatedEnv> {
  const path = requireEnvPath(name);
  return db.transaction(async (trx) => {
    const { env, created } = await tenancyQueries(trx).ensureEnv(path, mode);
    if (env.mode !== mode && !created) {
      throw new AppError('conflict', `${name} already exists in ${env.mode} mode`);
    }
    const publishable = await createKey(trx, env, 'publishable');
    const secret = await createKey(trx, env, 'secret');
    const clients = clientKeyQueries(trx);
    const existing = (await clients.list(env.id))[0];
    const client = existing
      ? { id: existing.id, publicKey: openPublicKey(keyring, existing) }
      : await createClientKey(trx, keyring, env.id).then(({ row, publicKey }) => ({ id: row.id, publicKey }));
    return {
      env,
      created,
      publishableKey: publishable.token,
      secretKey: secret.token,
      clientKey: { ...client, projectNumber: await clients.projectNumber(env.id) },
    };
  });
}

export async function requireEnv(db: Knex, name: string): Promise<EnvRow> {
  const env = await tenancyQueries(db).envByName(name);
  if (!env)
    throw new AppError('not_found', `no environment named ${name}; create it with \`cairn admin env create ${name}\``);
  return env;
}

// One place resolves a key to its environment and scopes (docs/api.md "Keys and authentication"),
// for the API's routes (wired into the route kernel by the app) and the console's sign-in. Every
// failure is a stable code: a malformed, unknown or revoked key → unauthorized; a key of the wrong
// kind or without the route's scope → forbidden.
import type { Knex } from 'knex';
import { AppError } from '../../app-error.ts';
import { hashKey, parseKey, type KeyKind, type Scope, type SecretScope } from './keys.ts';
import { tenancyQueries } from './queries.ts';

/** The caller a key makes. */
export interface KeyPrincipal {
  keyId: string;
  kind: KeyKind;
  envId: string;
  envName: string;
  scopes: readonly Scope[];
}

type Resolved = Awaited<ReturnType<ReturnType<typeof tenancyQueries>['resolveKey']>>;

// Concurrent requests with one key share the lookup in flight (single flight), so a busy client
// costs one key query per round trip, not one per request. Nothing is cached: a revocation
// committed before a lookup starts refuses every request that joins it, so it takes effect within
// one lookup's duration (milliseconds).
const inFlight = new WeakMap<object, Map<string, Promise<Resolved>>>();

function resolveKeyShared(deps: { db: Knex }, token: string): Promise<Resolved> {
  let pending = inFlight.get(deps.db);
  if (!pending) inFlight.set(deps.db, (pending = new Map()));
  const hash = hashKey(token);
  const id = hash.toString('base64');
  let lookup = pending.get(id);
  if (!lookup) {
    lookup = tenancyQueries(deps.db)
      .resolveKey(hash)
      .finally(() => pending.delete(id));
    pending.set(id, lookup);
  }
  return lookup;
}

/** The principal of a key given by its token (from a header, or typed into the console's sign-in form). */
export async function principalOf(
  deps: { db: Knex },
  token: string,
  kind: KeyKind,
  scope?: SecretScope,
): Promise<KeyPrincipal> {
  const shape = parseKey(token);
  if (!shape)
    throw new AppError('unauthorized', 'the API key is malformed; keys look like cairn_sk_test_… or cairn_pk_test_…');
  const key = await resolveKeyShared(deps, token);
  if (!key || key.kind !== shape.kind) throw new AppError('unauthorized', 'the API key is not valid');
  if (key.revoke_time)
    throw new AppError('unauthorized', 'the API key was revoked; create a new one with `cairn admin keys create`');
  if (key.kind !== kind) {
    throw new AppError(
      'forbidden',
      kind === 'secret'
        ? 'a publishable key cannot call server routes; use a secret key from your server'
        : 'never send a secret key from a browser; client routes take the publishable key',
    );
  }
  if (scope && !key.scopes.includes(scope)) {
    throw new AppError('forbidden', `this key lacks the scope ${scope}`, { details: { required_scope: scope } });
  }
  return { keyId: key.id, kind: key.kind, envId: key.env_id, envName: key.env_name, scopes: key.scopes };
}

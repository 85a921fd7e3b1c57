// One place resolves a key to its environment and scopes (docs/api.md "Keys and authentication").
// Every failure is a stable code: no key, a malformed, unknown or revoked key → unauthorized; a
// key of the wrong kind or without the route's scope → forbidden. Nothing is read before this passes.
import type { Context } from 'koa';
import { hashKey, parseKey, type SecretScope } from '../../domain/tenancy/keys.ts';
import { tenancyQueries } from '../../domain/tenancy/queries.ts';
import { AppError } from '../../app-error.ts';
import type { AppDeps, Principal } from '../context.ts';

type Resolved = Awaited<ReturnType<ReturnType<typeof tenancyQueries>['resolveKey']>>;

// Concurrent requests with one key share the lookup in flight (single flight), so a busy client
// costs one key query per round trip, not one per request. Nothing is cached: a revocation
// committed before a lookup starts refuses every request that joins it, so it takes effect within
// one lookup's duration (milliseconds).
const inFlight = new WeakMap<object, Map<string, Promise<Resolved>>>();

function resolveKeyShared(deps: AppDeps, token: string): Promise<Resolved> {
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

function bearer(ctx: Context): string | undefined {
  const header = ctx.get('authorization');
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw new AppError('unauthorized', 'the Authorization header must be "Bearer <key>"');
  return m[1];
}

function publishable(ctx: Context): string | undefined {
  const fromQuery = ctx.query.publishable_key;
  const value = ctx.get('cairn-publishable-key') || (typeof fromQuery === 'string' ? fromQuery : undefined);
  return value || undefined;
}

export async function authenticate(
  ctx: Context,
  deps: AppDeps,
  kind: 'secret' | 'publishable',
  scope?: SecretScope,
): Promise<Principal> {
  const token = kind === 'secret' ? bearer(ctx) : publishable(ctx);
  if (!token) {
    throw new AppError(
      'unauthorized',
      kind === 'secret'
        ? 'no API key: send "Authorization: Bearer <secret key>"'
        : 'no publishable key: send it as the publishable_key query parameter or the Cairn-Publishable-Key header',
    );
  }
  return principalOf(deps, token, kind, scope);
}

/** The principal of a key given by its token (from a header, or typed into the console's sign-in form). */
export async function principalOf(
  deps: AppDeps,
  token: string,
  kind: 'secret' | 'publishable',
  scope?: SecretScope,
): Promise<Principal> {
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

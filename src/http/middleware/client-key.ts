// How a Sentry request carries its client key (docs/api.md "Sentry compatibility"): the DSN's
// public key as the `sentry_key` query parameter (the JavaScript SDKs), or in `X-Sentry-Auth`
// (most others; `Authorization: Sentry …` when there is none, as relay reads both). What the key
// is worth is the app's to say (KernelHooks.clientKey). A tunnel names the key only in its
// envelope's first line (`dsn`): the kernel reads no body, so a route that takes such a key
// (`keyFrom: 'request-or-body'`) hands the handler a resolver for it instead of a key.
import type { Context } from 'koa';
import type { AppDeps, ClientKeyAuth } from '../context.ts';
import type { KernelHooks } from '../hooks.ts';

/** Where an `auth: 'client-key'` route takes its key: the request only, or its body too. */
export type ClientKeyFrom = 'request' | 'request-or-body';

/**
 * The fields of `X-Sentry-Auth: Sentry sentry_key=…, sentry_version=7, sentry_client=…`, read as
 * relay reads them (relay-server's request_meta.rs): comma-separated `name=value` pairs, blanks
 * around either ignored (and pairs separated by blanks alone, as some old clients wrote them); the
 * `Sentry ` prefix (any case) is optional here, as the header of some raven clients has none. Raven
 * clients also send `sentry_timestamp` and, from a DSN of the form `https://public:secret@host/n`,
 * `sentry_secret`: relay reads the secret and checks it against nothing, and so does Cairn, which
 * neither stores nor logs it.
 */
export function parseAuthHeader(header: string | undefined): Record<string, string> {
  const fields: Record<string, string> = {};
  if (!header) return fields;
  // Pairs separated by commas, or only by blanks as some old clients wrote them; a value may be quoted.
  for (const m of header.slice(0, 4096).matchAll(/(?:^|[\s,])(sentry_\w{1,32})\s*=\s*(?:"([^"]*)"|([^\s,]*))/gi)) {
    const name = m[1]!.toLowerCase();
    const value = (m[2] ?? m[3] ?? '').trim();
    if (value !== '') fields[name] ??= value;
  }
  return fields;
}

/** The public key of an `X-Sentry-Auth` (or `Authorization: Sentry …`) header, or undefined. */
export const keyFromAuthHeader = (header: string | undefined): string | undefined => parseAuthHeader(header).sentry_key;

/**
 * The auth header of a Sentry request: `X-Sentry-Auth`, else an `Authorization` whose scheme is
 * `Sentry` (relay reads both, and the older raven clients send the latter).
 */
export function sentryAuthHeader(get: (name: string) => string): string | undefined {
  const header = get('x-sentry-auth');
  if (header) return header;
  const authorization = get('authorization');
  return /^\s*sentry\s/i.test(authorization) ? authorization : undefined;
}

/** The request's public key: `sentry_key` in the query, else the auth header's; undefined for none. */
export function clientKeyOfRequest(ctx: Context): string | undefined {
  const fromQuery = ctx.query.sentry_key;
  if (typeof fromQuery === 'string' && fromQuery !== '') return fromQuery;
  return keyFromAuthHeader(sentryAuthHeader((name) => ctx.get(name)));
}

/**
 * Checks the request's key for `projectNumber` before anything of the body is read: a wrong one
 * costs no reading. Without one, a `request` route answers the hook's 401; a `request-or-body`
 * route defers to the handler, whose `resolve` checks the key the body names (none is 401 then).
 */
export async function authenticateClientKey(
  ctx: Context,
  deps: AppDeps,
  hooks: KernelHooks,
  projectNumber: string,
  keyFrom: ClientKeyFrom,
): Promise<ClientKeyAuth> {
  const publicKey = clientKeyOfRequest(ctx);
  if (publicKey === undefined && keyFrom === 'request-or-body')
    return { key: undefined, resolve: (fromBody) => hooks.clientKey(deps, projectNumber, fromBody) };
  const key = await hooks.clientKey(deps, projectNumber, publicKey);
  return { key, resolve: () => Promise.resolve(key) };
}

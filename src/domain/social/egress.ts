// Outbound requests to addresses an environment chose (its own social provider's issuer, endpoints
// and API base). A live environment's key holder must not be able to point the service at its own
// network: cloud metadata (169.254.169.254), the database, internal admin ports (server-side
// request forgery, OWASP SSRF Prevention Cheat Sheet). So for live environments every such request
// is https and connects only to public unicast addresses, the same rule CONTRACT.md sets for
// webhook targets. The check runs where the socket is opened (the DNS answer it connects to), not
// on an earlier lookup, so a name that resolves differently the second time (DNS rebinding) gains
// nothing; it also covers addresses a discovery document names, which the operator never typed.
import { Agent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import { AppError } from '../../errors.ts';
import { AddressRefused, guardedLookup, isPublicAddress, lookupResolver, resolvePublic } from '../../http/addresses.ts';

export { isPublicAddress };

export class EgressRefused extends AddressRefused {
  override readonly name = 'EgressRefused';
}

export type EgressFetch = ReturnType<typeof guardedFetch>;

/** At set-up: https, and a host that resolves now, only to public addresses (else 400 naming the field). */
export async function checkEndpoint(field: string, url: string): Promise<void> {
  const refuse = (why: string) =>
    new AppError(
      'invalid_request',
      `${field} ${why}: a live environment's provider must be reachable over https at public addresses`,
      { details: { reason: 'endpoint_not_allowed', field } },
    );
  const target = new URL(url);
  if (target.protocol !== 'https:') throw refuse('is not https');
  try {
    await resolvePublic(target.hostname.replace(/^\[|\]$/g, ''), lookupResolver);
  } catch (err) {
    if (err instanceof AddressRefused) throw refuse(err.message);
    throw err;
  }
}

export interface EgressInit {
  method?: string;
  headers?: Record<string, string> | [string, string][] | Headers;
  body?: string | URLSearchParams | ArrayBuffer | Uint8Array | ReadableStream | null;
  signal?: AbortSignal | null;
}

/** Whether `err` (or an error it wraps, as openid-client does) is a refusal from this module. */
export function isEgressRefusal(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++)
    if (e instanceof AddressRefused) return true;
  return false;
}

/**
 * A fetch for https only, connecting only to addresses `allowed` accepts (production: public
 * ones). Redirects are not followed (openid-client asks for `redirect: 'manual'` anyway). `tls.ca`
 * adds trust anchors (tests with their own certificate authority).
 */
export function guardedFetch(allowed: (address: string) => boolean = isPublicAddress, tls: { ca?: string } = {}) {
  // Its own agent: a pooled socket opened by other code (the global agent) was never checked.
  const agent = new Agent({
    lookup: guardedLookup(lookupResolver, allowed),
    keepAlive: false,
    ...(tls.ca ? { ca: tls.ca } : {}),
  });
  return async (url: string, init: EgressInit = {}): Promise<Response> => {
    const target = new URL(url);
    if (target.protocol !== 'https:') throw new EgressRefused(`${target.origin}: only https is allowed`);
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) && !allowed(literal)) throw new EgressRefused(`${target.host} is not a public address`);
    if (init.body instanceof ReadableStream) throw new EgressRefused('streamed request bodies are not supported');
    const body =
      init.body instanceof URLSearchParams
        ? init.body.toString()
        : init.body instanceof ArrayBuffer
          ? Buffer.from(init.body)
          : (init.body ?? undefined);
    const headers = Object.fromEntries(new Headers(init.headers ?? {}).entries());
    if (init.body instanceof URLSearchParams)
      headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
    return new Promise<Response>((resolve, reject) => {
      const req = httpsRequest(
        target,
        { method: init.method ?? 'GET', headers, agent, ...(init.signal ? { signal: init.signal } : {}) },
        (res) => {
          const answer = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) answer.append(name, v);
          }
          const status = res.statusCode ?? 502;
          const empty = [204, 205, 304].includes(status) || req.method === 'HEAD';
          if (empty) res.resume();
          resolve(
            new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
              status,
              statusText: res.statusMessage ?? '',
              headers: answer,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
}

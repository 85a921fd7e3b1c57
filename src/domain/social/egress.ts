// Outbound requests to addresses an environment chose (its own social provider's issuer, endpoints
// and API base). A key holder must not be able to point the service at its own network: cloud
// metadata (169.254.169.254), the database, internal admin ports (server-side request forgery,
// OWASP SSRF Prevention Cheat Sheet). The rule is webhook targets' (egress/target-rule.ts): live
// environments https to public unicast addresses only, test environments too unless the operator
// allows private targets. The check runs where the socket is opened (the DNS answer it connects
// to), not on an earlier lookup, so a name that resolves differently the second time (DNS
// rebinding) gains nothing; it also covers addresses a discovery document names, which the
// operator never typed. Names are resolved with a deadline (egress/addresses.ts deadlineResolver), not
// getaddrinfo, whose threads also hash passwords: a provider on a name whose DNS never answers must
// not stall everyone's sign-in. A refusal reads the same whether the name did not resolve or
// resolved to a private address, so it cannot map the service's internal names.
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import { AppError } from '../../app-error.ts';
import {
  AddressRefused,
  deadlineResolver,
  guardedLookup,
  hostRefused,
  isPublicAddress,
  resolvePublic,
  type Resolver,
} from '../../egress/addresses.ts';
import type { TargetRule } from '../../egress/target-rule.ts';

export { isPublicAddress };

export class EgressRefused extends AddressRefused {
  override readonly name = 'EgressRefused';
}

export type EgressFetch = ReturnType<typeof guardedFetch>;

/** At set-up, where `rule` admits public addresses only: a host that resolves now, only to those (and https where `rule` says); else 400 naming the field. */
export async function checkEndpoint(
  field: string,
  url: string,
  rule: TargetRule,
  resolve: Resolver = deadlineResolver,
): Promise<void> {
  const refuse = (why: string) =>
    new AppError('invalid_request', `${field} is not allowed: ${why}; ${rule.because}`, {
      details: { reason: 'endpoint_not_allowed', field },
    });
  const target = new URL(url);
  if (rule.httpsOnly && target.protocol !== 'https:') throw refuse('the URL is not https');
  try {
    await resolvePublic(target.hostname.replace(/^\[|\]$/g, ''), resolve);
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

/** The refusal from this module that `err` is or wraps (as openid-client does), if any. */
export function egressRefusal(err: unknown): AddressRefused | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++)
    if (e instanceof AddressRefused) return e;
  return undefined;
}

/**
 * Most bytes of a provider's answer. Discovery documents, key sets, token and UserInfo answers are
 * a few KiB; a provider is chosen by a key holder, and the answer is read whole into a web process
 * (openid-client parses it as JSON), so one that never ends must not hold its memory.
 */
export const answerMaxBytes = 1024 * 1024;

/** The answer's bytes as they come, failing the read past `answerMaxBytes`. */
function bounded(res: Readable): Readable {
  let seen = 0;
  res.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > answerMaxBytes)
      res.destroy(new Error(`the provider's answer is longer than ${answerMaxBytes / 1024 / 1024} MiB`));
  });
  return res;
}

export interface GuardedFetchOptions {
  /** Extra trust anchors (tests with their own certificate authority). */
  ca?: string;
  /** Refuse plain http (live environments); default true. */
  httpsOnly?: boolean;
  /** The DNS where sockets open; default deadlineResolver (tests name their own for `localhost`). */
  resolve?: Resolver;
}

/**
 * A fetch connecting only to addresses `allowed` accepts (production: public ones), over https
 * unless `httpsOnly` is false. Redirects are not followed (openid-client asks for
 * `redirect: 'manual'` anyway).
 */
export function guardedFetch(
  allowed: (address: string) => boolean = isPublicAddress,
  options: GuardedFetchOptions = {},
) {
  const httpsOnly = options.httpsOnly ?? true;
  // Its own agents: a pooled socket opened by other code (the global agent) was never checked.
  const guarded = { lookup: guardedLookup(options.resolve ?? deadlineResolver, allowed), keepAlive: false };
  const https = new HttpsAgent({ ...guarded, ...(options.ca ? { ca: options.ca } : {}) });
  const http = new HttpAgent(guarded);
  return async (url: string, init: EgressInit = {}): Promise<Response> => {
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    if (!secure && (httpsOnly || target.protocol !== 'http:'))
      throw new EgressRefused(`${target.protocol} is not allowed, only https${httpsOnly ? '' : ' and http'}`);
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) && !allowed(literal)) throw new EgressRefused(hostRefused);
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
      const req = (secure ? httpsRequest : httpRequest)(
        target,
        {
          method: init.method ?? 'GET',
          headers,
          agent: secure ? https : http,
          ...(init.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          const answer = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) answer.append(name, v);
          }
          const status = res.statusCode ?? 502;
          const empty = [204, 205, 304].includes(status) || req.method === 'HEAD';
          if (empty) res.resume();
          resolve(
            new Response(empty ? null : (Readable.toWeb(bounded(res)) as ReadableStream<Uint8Array>), {
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

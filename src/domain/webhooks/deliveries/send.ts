// One attempt's HTTP request (docs/api.md "Webhooks", "Delivery"): POST the message's bytes with
// its signed headers; a 2xx within 15 s is success. Redirects are never followed (a 3xx is a failed
// attempt: following one would let a receiver send us anywhere). The receiver's answer body is read
// and dropped (at most 64 KiB), never stored. Where the environment's rule admits only public
// addresses (live environments; test environments under CAIRN_PRIVATE_TARGETS=deny), the socket
// connects only to those, checked on the answer it connects to (targets.ts).
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import {
  AddressRefused,
  deadlineResolver,
  guardedLookup,
  resolvePublic,
  type Resolver,
} from '../../../egress/addresses.ts';
import type { TargetRule } from '../../../egress/target-rule.ts';
import { bareHost, checkScheme } from '../endpoints/targets.ts';

export const attemptTimeoutMs = 15_000;
const maxAnswerBytes = 64 * 1024;

export interface AttemptOutcome {
  ok: boolean;
  statusCode?: number;
  durationMs: number;
  error?: string;
}

export interface SendOptions {
  /** The DNS used where guarded sockets open (egress/addresses.ts; tests play a rebinding DNS with it). */
  resolve?: Resolver;
  /** Extra trust anchors for https (tests with their own certificate authority). */
  ca?: string;
  timeoutMs?: number;
}

/**
 * A sender for the worker's lifetime: kept-alive sockets per rule, so a socket a rule with public
 * addresses only reuses was checked when it opened, by that rule.
 */
export function createSender(options: SendOptions = {}) {
  // A worker's fast lane sends up to 64 at once (webhooks/queues.ts): a request waiting for a
  // socket would spend its timeout and its "answered within a second" there. As many stay open
  // between fetches (with 8, each burst reopened dozens: connects, DNS checks, TLS handshakes),
  // for 4 s: under the 5 s a Node receiver keeps one, so we close an idle socket before it does.
  const keep = { keepAlive: true, maxSockets: 64, maxFreeSockets: 64, timeout: 4000 };
  const tls = options.ca ? { ca: options.ca } : {};
  const guarded = { ...keep, lookup: guardedLookup(options.resolve ?? deadlineResolver) };
  const agents = {
    public: { 'https:': new HttpsAgent({ ...guarded, ...tls }), 'http:': new HttpAgent(guarded) },
    any: { 'https:': new HttpsAgent({ ...keep, ...tls }), 'http:': new HttpAgent(keep) },
  };
  const timeoutMs = options.timeoutMs ?? attemptTimeoutMs;

  async function send(
    rule: TargetRule,
    rawUrl: string,
    headers: Record<string, string>,
    body: string,
  ): Promise<AttemptOutcome> {
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    const url = new URL(rawUrl);
    try {
      checkScheme(url, rule);
      // A literal address opens its socket without a lookup: checked here; a name is checked by
      // the agent's lookup, on the answer the socket connects to.
      const host = bareHost(url);
      if (rule.publicOnly && isIP(host)) await resolvePublic(host, deadlineResolver);
      const agent = agents[rule.publicOnly ? 'public' : 'any'][url.protocol as 'http:' | 'https:'];
      const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const payload = Buffer.from(body);
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          url,
          {
            method: 'POST',
            agent,
            headers: {
              ...headers,
              'content-type': 'application/json',
              'content-length': String(payload.length),
              'user-agent': 'Cairn-Webhooks/1.0',
            },
          },
          (res: IncomingMessage) => {
            let read = 0;
            res.on('data', (chunk: Buffer) => {
              read += chunk.length;
              if (read > maxAnswerBytes) res.destroy();
            });
            res.on('close', () => resolve(res.statusCode ?? 0));
            res.on('error', () => resolve(res.statusCode ?? 0));
          },
        );
        const timer = setTimeout(() => req.destroy(new TimeoutError()), timeoutMs);
        req.on('close', () => clearTimeout(timer));
        req.on('error', reject);
        req.end(payload);
      });
      const ok = status >= 200 && status < 300;
      if (ok) return { ok, statusCode: status, durationMs: took() };
      return {
        ok,
        statusCode: status,
        durationMs: took(),
        ...(status >= 300 && status < 400 ? { error: 'the receiver answered a redirect, which is not followed' } : {}),
      };
    } catch (err) {
      return { ok: false, durationMs: took(), error: describe(err, rule, timeoutMs) };
    }
  }

  return {
    send,
    close(): void {
      for (const kind of Object.values(agents)) for (const agent of Object.values(kind)) agent.destroy();
    },
  };
}

export type Sender = ReturnType<typeof createSender>;

class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/**
 * A short reason for the attempts list: never a stack, never the receiver's own text. A refusal
 * reads the same for every refused host, so the list cannot tell one internal service from another.
 */
function describe(err: unknown, rule: TargetRule, timeoutMs: number): string {
  if (err instanceof TimeoutError) return `no answer within ${timeoutMs / 1000} s`;
  if (err instanceof AddressRefused) return `refused: ${err.message}; ${rule.because}`;
  const code = (err as NodeJS.ErrnoException).code;
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset by the receiver',
    ENOTFOUND: 'the host does not resolve',
    EAI_AGAIN: 'the host does not resolve (DNS lookup failed)',
    EHOSTUNREACH: 'the host is unreachable',
    ENETUNREACH: 'the network is unreachable',
    ETIMEDOUT: 'the connection timed out',
    CERT_HAS_EXPIRED: 'TLS: the certificate has expired',
    DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS: the certificate is self-signed',
    ERR_TLS_CERT_ALTNAME_INVALID: 'TLS: the certificate does not name this host',
    UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS: the certificate chain cannot be verified',
  };
  if (code && known[code]) return known[code];
  const message = err instanceof Error ? err.message : String(err);
  return (code ? `${code}: ${message}` : message).slice(0, 200);
}

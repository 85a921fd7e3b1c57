// Optional third source of breached passwords: the HIBP range API (k-anonymity: only the first 5
// hex digits of the SHA-1 leave the machine). `Add-Padding: true` makes every answer 800-1000 lines
// so its size reveals nothing; padding lines have a count of 0 and are ignored. A short timeout
// and a per-prefix cache keep sign-up fast; what happens when the API cannot answer is the
// environment's explicit choice (settings.breached_api.fail), see breached.ts.
import { AppError } from '../../../app-error.ts';

export interface HibpClient {
  /** Whether the API lists the digest (40 upper-case hex); throws store_unavailable when it cannot say. */
  contains(sha1: string): Promise<boolean>;
}

export interface HibpOptions {
  baseUrl?: string;
  timeoutMs?: number;
  cacheSeconds?: number;
  cacheEntries?: number;
  fetch?: typeof fetch;
}

export function createHibpClient(options: HibpOptions = {}): HibpClient {
  const base = (options.baseUrl ?? 'https://api.pwnedpasswords.com').replace(/\/$/, '');
  const cache = new Map<string, { suffixes: Set<string>; expires: number }>();
  const ttl = (options.cacheSeconds ?? 600) * 1000;
  const maxEntries = options.cacheEntries ?? 2000;

  async function range(prefix: string): Promise<Set<string>> {
    const hit = cache.get(prefix);
    if (hit && hit.expires > Date.now()) return hit.suffixes;
    let text: string;
    try {
      const res = await (options.fetch ?? fetch)(`${base}/range/${prefix}`, {
        headers: { 'add-padding': 'true', 'user-agent': 'cairn-identity' },
        signal: AbortSignal.timeout(options.timeoutMs ?? 1500),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      text = await res.text();
    } catch (err) {
      throw new AppError('store_unavailable', 'the breached-password service did not answer; retry shortly', {
        retryAfter: 5,
        cause: err,
      });
    }
    const suffixes = new Set<string>();
    for (const line of text.split('\n')) {
      const m = /^([0-9A-Fa-f]{35}):(\d+)/.exec(line.trim());
      if (m && m[2] !== '0') suffixes.add(m[1]!.toUpperCase());
    }
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
    cache.set(prefix, { suffixes, expires: Date.now() + ttl });
    return suffixes;
  }

  return {
    async contains(sha1) {
      return (await range(sha1.slice(0, 5))).has(sha1.slice(5));
    },
  };
}

let shared: HibpClient | undefined;

/** The process's client; tests point it at a local stand-in of the API. */
export function hibpClient(): HibpClient {
  shared ??= createHibpClient();
  return shared;
}

export function useHibpClient(client: HibpClient | undefined): void {
  shared = client;
}

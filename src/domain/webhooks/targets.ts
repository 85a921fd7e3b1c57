// Where an endpoint may point (CONTRACT.md "Webhooks", "Target addresses"). A live environment's
// key holder must not reach the service's own network through a webhook (server-side request
// forgery): only https, and only hosts whose every address is public unicast (http/addresses.ts).
// The rule is checked when the URL is set and again where each attempt opens its socket, on the
// DNS answer it connects to, so a name that later resolves to 127.0.0.1 (DNS rebinding) reaches
// nothing. Test environments also accept http:// and local addresses, for development.
import { Resolver as DnsResolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { AppError } from '../../errors.ts';
import { isPublicAddress } from '../../http/addresses.ts';
import type { EnvMode } from '../tenancy/keys.ts';

/** A host's addresses; tests pass their own to play a DNS that changes its answer. */
export type Resolver = (host: string) => Promise<string[]>;

// c-ares queries with a deadline, not dns.lookup: getaddrinfo holds one of libuv's four threads
// for as long as a name's server takes to answer (tens of seconds for one that never does), and
// those threads also hash passwords. A key holder choosing such names could starve sign-ins.
const dns = new DnsResolver({ timeout: 2000, tries: 2 });

export const systemResolver: Resolver = async (host) => {
  const answers = await Promise.allSettled([dns.resolve4(host), dns.resolve6(host)]);
  const addresses = answers.flatMap((a) => (a.status === 'fulfilled' ? a.value : []));
  if (addresses.length === 0) throw new Error(`${host} does not resolve`);
  return addresses;
};

/** The host as a socket takes it: an IPv6 literal loses its brackets. */
export const bareHost = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '');

/** Why an attempt or a URL was refused. */
export class TargetRefused extends Error {
  override readonly name = 'TargetRefused';
}

/** The addresses of `url`'s host when a live environment may connect to them; throws TargetRefused. */
export async function publicAddresses(url: URL, resolve: Resolver): Promise<string[]> {
  if (url.protocol !== 'https:') throw new TargetRefused('a live environment sends webhooks over https only');
  const host = bareHost(url);
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await resolve(host);
  } catch {
    throw new TargetRefused(`${url.hostname} does not resolve`);
  }
  if (addresses.length === 0) throw new TargetRefused(`${url.hostname} does not resolve`);
  // The address itself is not said: the answer would map the service's internal names for a caller.
  if (!addresses.every(isPublicAddress))
    throw new TargetRefused(`${url.hostname} resolves to an address that is not public`);
  return addresses;
}

/** At create and update: a URL the environment may send to, else 400 invalid_request naming `url`. */
export async function checkTarget(raw: string, mode: EnvMode, resolve: Resolver = systemResolver): Promise<string> {
  const refuse = (why: string) =>
    new AppError('invalid_request', `url is not allowed: ${why}`, {
      details: { reason: 'url_not_allowed', fields: [{ field: 'body.url', message: why }] },
    });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('only http and https URLs take webhooks');
  if (url.hash) throw refuse('a webhook URL has no #fragment');
  if (mode === 'live') {
    try {
      await publicAddresses(url, resolve);
    } catch (err) {
      if (err instanceof TargetRefused) throw refuse(err.message);
      throw err;
    }
  }
  return url.href;
}

// Where an endpoint may point (CONTRACT.md "Webhooks", "Target addresses"). A live environment's
// key holder must not reach the service's own network through a webhook (server-side request
// forgery): only https, and only hosts whose every address is public unicast (http/addresses.ts).
// The rule is checked when the URL is set and again where each attempt opens its socket, on the
// DNS answer it connects to, so a name that later resolves to 127.0.0.1 (DNS rebinding) reaches
// nothing. Test environments also accept http:// and local addresses, for development.
import { AppError } from '../../errors.ts';
import { AddressRefused, deadlineResolver, resolvePublic, type Resolver } from '../../http/addresses.ts';
import type { EnvMode } from '../tenancy/keys.ts';

/** The host as a socket takes it: an IPv6 literal loses its brackets. */
export const bareHost = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '');

/** A live environment's target: https, at public addresses only (resolved with `resolve`); else AddressRefused. */
async function liveTarget(url: URL, resolve: Resolver): Promise<void> {
  if (url.protocol !== 'https:') throw new AddressRefused('a live environment sends webhooks over https only');
  await resolvePublic(bareHost(url), resolve);
}

/** At create and update: a URL the environment may send to, else 400 invalid_request naming `url`. */
export async function checkTarget(raw: string, mode: EnvMode, resolve: Resolver = deadlineResolver): Promise<string> {
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
      await liveTarget(url, resolve);
    } catch (err) {
      if (err instanceof AddressRefused) throw refuse(err.message);
      throw err;
    }
  }
  return url.href;
}

// Where an endpoint may point (egress/target-rule.ts): a key holder must not reach the service's own
// network through a webhook (server-side request forgery). Live environments: https, and only hosts
// whose every address is public unicast (egress/addresses.ts); test environments: http or https,
// and the same address rule unless the operator allows private targets (CAIRN_PRIVATE_TARGETS).
// The rule is checked when the URL is set and again where each attempt opens its socket, on the
// DNS answer it connects to, so a name that later resolves to 127.0.0.1 (DNS rebinding), or an
// endpoint set while the operator still allowed private targets, reaches nothing. Where only public
// addresses are allowed, a name that does not resolve is refused with the same text as a private
// one (egress/addresses.ts hostRefused), at creation and at delivery: otherwise the answers would tell
// which of the service's internal names exist.
import { AppError } from '../../../app-error.ts';
import { AddressRefused, deadlineResolver, resolvePublic, type Resolver } from '../../../egress/addresses.ts';
import type { TargetRule } from '../../../egress/target-rule.ts';

/** The host as a socket takes it: an IPv6 literal loses its brackets. */
export const bareHost = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '');

/** AddressRefused when `rule` wants https and `url` is not. */
export function checkScheme(url: URL, rule: TargetRule): void {
  if (rule.httpsOnly && url.protocol !== 'https:') throw new AddressRefused('the URL is not https');
}

/**
 * At create and update: a URL the environment may send to, else 400 invalid_request naming `field`
 * (an alert rule's Slack URL, domain/alerts/rules/actions.ts, keeps the same rule under its own name).
 */
export async function checkTarget(
  raw: string,
  rule: TargetRule,
  resolve: Resolver = deadlineResolver,
  field = 'body.url',
): Promise<string> {
  const refuse = (why: string) =>
    new AppError('invalid_request', `${field.replace(/^body\./, '')} is not allowed: ${why}`, {
      details: { reason: 'url_not_allowed', fields: [{ field, message: why }] },
    });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('only http and https URLs take webhooks');
  if (url.hash) throw refuse('a webhook URL has no #fragment');
  try {
    checkScheme(url, rule);
    if (rule.publicOnly) await resolvePublic(bareHost(url), resolve);
  } catch (err) {
    if (err instanceof AddressRefused) throw refuse(`${err.message}; ${rule.because}`);
    throw err;
  }
  return url.href;
}

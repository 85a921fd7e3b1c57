// What a span may say of a URL's query: its keys, never its values. Queries carry one-use secrets
// (an email link's `token`, an OpenID Connect callback's `code` and `state`, a raven DSN's
// `sentry_secret`, a device `user_code`) and personal data (a search), and traces leave the
// service for whatever collector OTEL_* names. The HTTP instrumentation redacts only a few cloud
// signature parameters by default (@opentelemetry/instrumentation-http, DEFAULT_QUERY_STRINGS_TO_REDACT),
// so its start-span hooks replace `url.query` (incoming) and `url.full` (outgoing) with this.
import type { IncomingMessage, RequestOptions } from 'node:http';

const redacted = 'REDACTED';

/** `a=1&b=x` → `a=REDACTED&b=REDACTED`; a key without a value stays as it is. */
export function redactQuery(query: string): string {
  return query
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      return eq < 0 ? part : `${part.slice(0, eq)}=${redacted}`;
    })
    .join('&');
}

/** The span attributes of an incoming request whose URL has a query. */
export function incomingQueryAttributes(req: IncomingMessage): Record<string, string> {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return q < 0 ? {} : { 'url.query': redactQuery(url.slice(q + 1)) };
}

/** The span attributes of an outgoing request whose path has a query: `url.full` with it redacted. */
export function outgoingQueryAttributes(options: RequestOptions): Record<string, string> {
  const path = options.path ?? '/';
  const q = path.indexOf('?');
  if (q < 0) return {};
  const protocol = options.protocol ?? 'http:';
  const host = options.host ?? `${options.hostname ?? 'localhost'}${options.port ? `:${options.port}` : ''}`;
  return { 'url.full': `${protocol}//${host}${path.slice(0, q)}?${redactQuery(path.slice(q + 1))}` };
}

// What a span may say of a URL's query: its keys, never its values. Queries carry one-use secrets
// (an email link's `token`, an OpenID Connect callback's `code` and `state`, a raven DSN's
// `sentry_secret`, a device `user_code`) and personal data (a search), and traces leave the
// service for whatever collector OTEL_* names. The HTTP instrumentation redacts only a few cloud
// signature parameters by default (@opentelemetry/instrumentation-http, DEFAULT_QUERY_STRINGS_TO_REDACT),
// so its start-span hooks replace `url.query` (incoming) and `url.full` (outgoing) with this.
import type { IncomingMessage, RequestOptions } from 'node:http';

const redacted = 'REDACTED';

/** A query key a span may show: a short name. A part without `=` may be a value (`?<token>`). */
const plainKey = /^[A-Za-z0-9_.[\]-]{1,64}$/;

/** `a=1&b=x&<token>` → `a=REDACTED&b=REDACTED&REDACTED`. */
export function redactQuery(query: string): string {
  return query
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      if (part === '') return part;
      if (eq < 0) return redacted;
      return `${plainKey.test(part.slice(0, eq)) ? part.slice(0, eq) : redacted}=${redacted}`;
    })
    .join('&');
}

/** The span attributes of an incoming request whose URL has a query. */
export function incomingQueryAttributes(req: IncomingMessage): Record<string, string> {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return q < 0 ? {} : { 'url.query': redactQuery(url.slice(q + 1)) };
}

/** `host:port` as a URL writes it: an IPv6 literal in brackets, a default port left out. */
function authority(options: RequestOptions, protocol: string): string {
  const name = options.hostname ?? options.host?.replace(/:\d+$/, '') ?? 'localhost';
  const host = name.includes(':') && !name.startsWith('[') ? `[${name}]` : name;
  const port = options.port ?? options.host?.match(/:(\d+)$/)?.[1];
  const standard = (protocol === 'https:' && String(port) === '443') || (protocol === 'http:' && String(port) === '80');
  return port === undefined || port === null || standard ? host : `${host}:${port}`;
}

/** The span attributes of an outgoing request whose path has a query: `url.full` with it redacted. */
export function outgoingQueryAttributes(options: RequestOptions): Record<string, string> {
  const path = options.path ?? '/';
  const q = path.indexOf('?');
  if (q < 0) return {};
  const protocol = options.protocol ?? 'http:';
  return {
    'url.full': `${protocol}//${authority(options, protocol)}${path.slice(0, q)}?${redactQuery(path.slice(q + 1))}`,
  };
}

// The legacy shapes of a Sentry event, read as relay reads them at deserialisation, before
// event.ts maps the event: every interface under its old `sentry.interfaces.*` name, as raven-js 1.x
// and raven-python send them and as Sentry's own sample events are written. The names are the
// `legacy_alias`es of relay's `Event` and `Exception` (getsentry/relay,
// relay-event-schema/src/protocol/event.rs and exception.rs); the canonical key wins when both are
// present, and the alias is dropped either way. Interface lists are read as relay's `Values<T>`
// reads them (protocol/types.rs): `{"values": [...]}`, a bare array, or one object.
import { AppError } from '../../../app-error.ts';
import { limits } from '../../../contract/error-capture.ts';
import { trimDatabag } from './depth.ts';
import { isObj, type Obj } from './lenient.ts';

/** Canonical key ← its legacy names, in relay's order of preference after the canonical key. */
const eventAliases: [string, string[]][] = [
  ['logentry', ['sentry.interfaces.Message']],
  ['user', ['sentry.interfaces.User']],
  ['request', ['sentry.interfaces.Http']],
  ['contexts', ['sentry.interfaces.Contexts']],
  ['breadcrumbs', ['sentry.interfaces.Breadcrumbs']],
  ['exception', ['sentry.interfaces.Exception']],
  ['stacktrace', ['sentry.interfaces.Stacktrace']],
  ['template', ['sentry.interfaces.Template']],
  ['csp', ['sentry.interfaces.Csp']],
  ['hpkp', ['sentry.interfaces.Hpkp']],
  ['expectct', ['sentry.interfaces.ExpectCT']],
  ['expectstaple', ['sentry.interfaces.ExpectStaple']],
];

/** Databags that parseSentryJson trims when they come under their canonical names (depth.ts). */
const bags = new Set(['user', 'request', 'contexts']);

/**
 * Browser security reports. Relay makes them events of their own types (csp, hpkp, expectct,
 * expectstaple), not errors, and Sentry files them apart from issues; Cairn tracks errors only.
 */
const securityReports = ['csp', 'hpkp', 'expectct', 'expectstaple'] as const;

/** `Values<T>` as relay reads it: `{values}`, a bare array or (a non-empty object) one value. */
function values(v: unknown): Obj | undefined {
  if (Array.isArray(v)) return { values: v };
  if (!isObj(v)) return undefined;
  if ('values' in v) return v;
  return Object.keys(v).length > 0 ? { values: [v] } : undefined;
}

/** `from` renamed to `to` unless `to` is there already (relay: the canonical key wins); `from` goes. */
function rename(obj: Obj, to: string, from: string): boolean {
  if (!(from in obj)) return false;
  const moved = obj[to] === undefined || obj[to] === null;
  if (moved) obj[to] = obj[from];
  delete obj[from];
  return moved;
}

/**
 * `event` with its legacy keys under their canonical names, changed in place. A security report
 * alone is refused (400): it is not an error event, and storing it as a message would be filler.
 */
export function readLegacyEvent(event: Obj): Obj {
  for (const [to, aliases] of eventAliases)
    for (const from of aliases)
      if (rename(event, to, from) && bags.has(to) && isObj(event[to])) {
        const bag = event[to];
        for (const name of Object.keys(bag)) bag[name] = trimDatabag(bag[name]);
      }
  // `message` as an object is a LogEntry (relay: `message` is also an alias of `logentry`).
  if (isObj(event.message)) rename(event, 'logentry', 'message');
  const exception = values(event.exception);
  if (exception) event.exception = exception;
  else delete event.exception;
  const crumbs = values(event.breadcrumbs);
  if (crumbs) event.breadcrumbs = crumbs;
  const list = Array.isArray(exception?.values) ? exception.values : [];
  for (const e of list) if (isObj(e)) rename(e, 'stacktrace', 'sentry.interfaces.Stacktrace');
  // One exception beside an event-level stack (raven-js 1.x sends exactly that): the stack is the
  // exception's, as relay's normalize_exceptions moves it (relay-event-normalization/src/event.rs),
  // replacing any stack the exception had of its own.
  const only = list.length === 1 && isObj(list[0]) ? list[0] : undefined;
  if (only && isObj(event.stacktrace)) {
    only.stacktrace = event.stacktrace;
    delete event.stacktrace;
  }
  formatLogEntry(event.logentry);
  refuseSecurityReport(event);
  return event;
}

function refuseSecurityReport(event: Obj): void {
  const report = securityReports.find((k) => event[k] !== undefined && event[k] !== null);
  for (const k of securityReports) delete event[k];
  const isError = event.exception !== undefined || event.logentry !== undefined || event.message !== undefined;
  if (report && !isError)
    throw new AppError(
      'invalid_request',
      `the event is a ${report} security report, not an error: Cairn stores error events only`,
      { details: { reason: 'security_report', report } },
    );
}

// printf-style placeholders of Python's `%` operator, which raven-python's `params` fill:
// `%s`, `%d`, `%(name)s`, flags and widths, and `%%` (relay formats them the same way in its
// logentry normalisation, relay-event-normalization/src/logentry.rs).
const placeholder = /%(?:\((\w+)\))?[#0\- +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?([diouxXeEfFgGcrsa%])/g;

/**
 * Sets `formatted` from `message` and `params` when the SDK sent none, as relay does. What params
 * add stops at the message limit: `%(x)s` a thousand times over a large `x` must not multiply it.
 */
function formatLogEntry(entry: unknown): void {
  if (!isObj(entry) || typeof entry.message !== 'string') return;
  if (typeof entry.formatted === 'string' && entry.formatted !== '') return;
  const params = entry.params;
  if (!Array.isArray(params) && !isObj(params)) return;
  let i = 0;
  let added = 0;
  let missing = false;
  const formatted = entry.message.replace(placeholder, (whole, key: string | undefined, type: string) => {
    if (type === '%') return '%';
    const v =
      key !== undefined ? (isObj(params) ? params[key] : undefined) : Array.isArray(params) ? params[i++] : undefined;
    if (v === undefined) missing = true;
    if (v === undefined || added > limits.message) return v === undefined ? whole : '';
    const text = typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
    added += text.length;
    return text;
  });
  if (!missing) entry.formatted = formatted.slice(0, limits.message);
}

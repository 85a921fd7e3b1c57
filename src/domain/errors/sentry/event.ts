// A Sentry event (https://develop.sentry.dev/sdk/data-model/event-payloads/) as a Cairn capture
// (docs/api.md "Sentry compatibility", Mapping). Sentry's value rules apply, not capture's
// narrower ones: an SDK's event is normalised, never refused for a value (relay trims and renames
// where capture answers 400), so every field here is read leniently and cut to capture's limits.
// Only a payload that is not a JSON object is malformed.
import { createHash } from 'node:crypto';
import bourne from '@hapi/bourne';
import { AppError } from '../../../app-error.ts';
import { checkEventDepth, trimDatabag } from './depth.ts';
import { eventLevel } from './level.ts';
import { sentryFrames as frames } from './frames.ts';
import { linkedCauses } from './causes.ts';
import { parseDebugId } from '../source-maps/debug-ids.ts';
import { isHexId } from '../../../ids.ts';
import { labelChars, limits, tagKeyChars, type BreadcrumbInput } from '../../../contract/error-capture.ts';
import type { SentryParts } from '../../../contract/error-event.ts';
import type { CapturedEvent } from '../intake/captured-event.ts';
import { isObj, str, type Obj } from './lenient.ts';

/** A Sentry event as a capture: always with what it brought beyond one (contract/error-event.ts `storedSentryParts`). */
export type SentryEventInput = CapturedEvent & { sentry: SentryParts };

/** The event of a payload, its depth checked before it is parsed and its databags trimmed (depth.ts). */
export function parseSentryJson(payload: Buffer, what: string): Obj {
  const { trim } = checkEventDepth(payload, what);
  let value: unknown;
  try {
    value = bourne.parse(payload.toString('utf8'), { protoAction: 'remove' });
  } catch {
    throw new AppError('invalid_request', `the ${what} is not JSON`);
  }
  if (!isObj(value)) throw new AppError('invalid_request', `the ${what} is not a JSON object`);
  if (trim) {
    if (value.extra !== undefined) value.extra = trimDatabag(value.extra);
    for (const k of ['contexts', 'user', 'request'] as const) {
      const bags = value[k];
      if (isObj(bags)) for (const name of Object.keys(bags)) bags[name] = trimDatabag(bags[name]);
    }
  }
  return value;
}

/** Sentry's `timestamp`: seconds since the epoch (a float) or an RFC 3339 string; else the receipt time. */
function eventTime(v: unknown, now: Date): string {
  const t = typeof v === 'number' ? new Date(v * 1000) : typeof v === 'string' ? new Date(v) : undefined;
  const ok = t && !Number.isNaN(t.getTime()) && t.getUTCFullYear() >= 2000 && t.getUTCFullYear() <= 9999;
  return (ok ? t : now).toISOString();
}

/** A release or name as capture's label: disallowed characters become `-`, cut to 200. */
const notLabel = new RegExp(`[^${labelChars}]`, 'g');
const notTagKey = new RegExp(`[^${tagKeyChars}]`, 'g');

export function sentryLabel(v: unknown): string | undefined {
  const s = str(v, 400)
    ?.replace(notLabel, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 200);
  return s || undefined;
}

function tags(v: unknown, environment: string | undefined): Record<string, string> {
  const pairs: [unknown, unknown][] = Array.isArray(v)
    ? v.filter((p): p is [unknown, unknown] => Array.isArray(p) && p.length === 2)
    : isObj(v)
      ? Object.entries(v)
      : [];
  const out: Record<string, string> = {};
  if (environment !== undefined) out.environment = environment.slice(0, 200);
  for (const [k, val] of pairs) {
    const key = typeof k === 'string' ? k.replace(notTagKey, '_').slice(0, 32) : '';
    const value = typeof val === 'string' ? val : val === null || typeof val === 'object' ? undefined : String(val);
    if (key && value !== undefined && Object.keys(out).length < limits.tags) out[key] ??= value.slice(0, 200);
  }
  return out;
}

const levels: Record<string, BreadcrumbInput['level']> = {
  debug: 'debug',
  info: 'info',
  log: 'info',
  warning: 'warning',
  warn: 'warning',
  error: 'error',
  fatal: 'fatal',
  critical: 'fatal',
};

function breadcrumbs(v: unknown, now: Date): BreadcrumbInput[] {
  const list = (isObj(v) && Array.isArray(v.values) ? v.values : Array.isArray(v) ? v : []).filter(isObj);
  return list.slice(-limits.breadcrumbs).map((b) => {
    const crumb: BreadcrumbInput = {};
    if (b.timestamp !== undefined) crumb.timestamp = eventTime(b.timestamp, now);
    const type = str(b.type, 64);
    const category = str(b.category, 256);
    const level = typeof b.level === 'string' ? levels[b.level] : undefined;
    const message = str(b.message, 4096);
    if (type !== undefined) crumb.type = type;
    if (category !== undefined) crumb.category = category;
    if (level !== undefined) crumb.level = level;
    if (message !== undefined) crumb.message = message;
    // Whole here, nested values as JSON text: the scrubber reads the keys inside them (a request
    // body's `password`), which a cut could leave half-written; cut once scrubbed (cutBreadcrumbData).
    if (isObj(b.data)) {
      crumb.data = Object.fromEntries(
        Object.entries(b.data)
          .slice(0, 32)
          .map(([k, d]) => [
            k.slice(0, 64),
            typeof d === 'string' || typeof d === 'number' || typeof d === 'boolean' || d === null
              ? d
              : (JSON.stringify(d) ?? ''),
          ]),
      );
    }
    return crumb;
  });
}

/** Breadcrumb data values cut to capture's limit, once scrubbed (the worker's last step before storing). */
export function cutBreadcrumbData(crumbs: readonly Pick<BreadcrumbInput, 'data'>[]): void {
  for (const crumb of crumbs)
    for (const k in crumb.data) {
      const d = crumb.data[k];
      if (typeof d === 'string' && d.length > limits.breadcrumbData) crumb.data[k] = d.slice(0, limits.breadcrumbData);
    }
}

/** `["{{ default }}"]` (or none) is Cairn's own grouping; anything else names the group. */
function fingerprint(v: unknown): string | undefined {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  const parts = v.map((p) => (typeof p === 'string' ? p : (JSON.stringify(p) ?? '')));
  if (parts.some((p) => p === '{{ default }}' || p === '{{default}}')) return undefined;
  const joined = parts.join('\n');
  return joined.length <= 512 ? joined || undefined : createHash('sha256').update(joined).digest('hex');
}

const hex = (v: unknown, length: 16 | 32): string | undefined =>
  typeof v === 'string' && isHexId(v, length) ? v : undefined;

/** Sentry's headers: an object, or `[[name, value], …]`. */
function headers(v: unknown): Obj | undefined {
  if (Array.isArray(v))
    return Object.fromEntries(
      v.filter((p): p is [string, unknown] => Array.isArray(p) && typeof p[0] === 'string').map(([k, val]) => [k, val]),
    );
  return isObj(v) ? v : undefined;
}

function messageOf(event: Obj): string | undefined {
  const fromEntry = (e: unknown) =>
    isObj(e) ? (str(e.formatted, limits.message) ?? str(e.message, limits.message)) : undefined;
  return fromEntry(event.logentry) ?? str(event.message, limits.message) ?? fromEntry(event.message);
}

/**
 * The capture of a Sentry event. `eventId` is the envelope's when the payload has none. The outer
 * exception is the last of `exception.values`; the earlier ones are its causes.
 */
export function fromSentryEvent(event: Obj, now: Date, eventId?: string): SentryEventInput {
  const values = (
    isObj(event.exception) && Array.isArray(event.exception.values)
      ? event.exception.values
      : Array.isArray(event.exception)
        ? event.exception
        : []
  ).filter(isObj);
  const last = values.at(-1);
  // captureMessage with a stack (attachStacktrace, on by default in Node) sends the message as an
  // exception with no `type` beside its `logentry`/`message`: a message event, as Sentry shows it.
  const eventMessage = messageOf(event);
  const synthetic = last !== undefined && last.type === undefined && eventMessage !== undefined;
  const outer = synthetic ? undefined : last;
  const sentry: SentryParts = {};
  const environment = str(event.environment, 200);
  const input: SentryEventInput = {
    event_time: eventTime(event.timestamp, now),
    exception_type: outer ? (str(outer.type, 256) ?? 'Error') : 'Message',
    tags: tags(event.tags, environment),
    sentry,
  };
  const id = (str(event.event_id, 64) ?? eventId)?.replace(/-/g, '').toLowerCase();
  if (id && /^[0-9a-f]{32}$/.test(id)) input.event_id = id;
  const message = outer ? str(outer.value, limits.message) : eventMessage;
  if (message !== undefined) input.message = message;
  if (!outer) sentry.kind = 'message';
  const stack = frames((outer ?? last)?.stacktrace ?? event.stacktrace);
  if (stack.length > 0) input.stack_frames = stack;
  const release = sentryLabel(event.release);
  if (release !== undefined) input.release = release;
  const crumbs = breadcrumbs(event.breadcrumbs, now);
  if (crumbs.length > 0) input.breadcrumbs = crumbs;
  const fp = fingerprint(event.fingerprint);
  if (fp !== undefined) input.fingerprint = fp;
  const trace = isObj(event.contexts) && isObj(event.contexts.trace) ? event.contexts.trace : undefined;
  const traceId = hex(trace?.trace_id, 32);
  const spanId = hex(trace?.span_id, 16);
  if (traceId) input.trace_id = traceId;
  if (spanId) input.span_id = spanId;

  // Its causes, as a capture's linked exceptions: the pipeline reads them as it reads a printed `[cause]`.
  if (outer && values.length > 1) input.linked_exceptions = linkedCauses(values, outer);
  const level = eventLevel(event.level);
  if (level !== undefined) sentry.level = level;
  for (const k of ['platform', 'logger', 'dist', 'server_name'] as const) {
    const v = str(event[k], 200);
    if (v !== undefined) sentry[k] = v;
  }
  if (environment !== undefined) sentry.environment = environment;
  for (const k of ['user', 'contexts', 'extra'] as const) if (isObj(event[k])) sentry[k] = event[k];
  if (isObj(event.request)) {
    const request: Obj = { ...event.request };
    const h = headers(event.request.headers);
    if (h) request.headers = h;
    else delete request.headers;
    sentry.request = request;
  }
  if (isObj(event.sdk)) {
    const sdk: SentryParts['sdk'] = {};
    const name = str(event.sdk.name, 200);
    const version = str(event.sdk.version, 200);
    if (name !== undefined) sdk.name = name;
    if (version !== undefined) sdk.version = version;
    sentry.sdk = sdk;
  }
  const images = isObj(event.debug_meta) && Array.isArray(event.debug_meta.images) ? event.debug_meta.images : [];
  for (const image of images.filter(isObj)) {
    const file = str(image.code_file, 2048);
    const debugId = parseDebugId(image.debug_id);
    if (image.type === 'sourcemap' && file && debugId && Object.keys(sentry.debug_ids ?? {}).length < 100)
      (sentry.debug_ids ??= {})[file] = debugId;
  }
  return input;
}

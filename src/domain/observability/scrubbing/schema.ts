// Scrubbing by schema, relay's way (getsentry/relay: every field carries a `pii` attribute and the
// scrubber walks the whole event): every string of a stored event is scrubbed by the policy unless
// its field is marked safe here, so a field added later is scrubbed without anyone naming it.
// Fields marked safe hold no free text: validated labels, ids, times, numbers as strings.
import type { Scrubber } from './scrub.ts';

export type ScrubNode =
  /** Holds no personal data: kept as it is. */
  | 'safe'
  /** Free text, scrubbed by the policy's rules (the default for any field not named). */
  | 'text'
  /** Scrubbed, and remembered per policy: strings that recur from event to event (frame files, context lines). */
  | 'recurring'
  /** `recurring` but for the host-name rules: a frame's file and function (Scrubber.location). */
  | 'location'
  /** A map of strings under keys: a value under a sensitive key goes whole, others are scrubbed as text. */
  | { keyed: true }
  /** An object: its fields by name, any other field by `other` (text when unset). */
  | { fields: Readonly<Record<string, ScrubNode>>; other?: ScrubNode }
  /** An array of one kind. */
  | { items: ScrubNode };

/** `value` with every string its schema does not mark safe scrubbed; the input is not changed. */
export function scrubBySchema<T>(value: T, node: ScrubNode, s: Scrubber): T {
  return walk(value, node, s, undefined) as T;
}

function walk(value: unknown, node: ScrubNode, s: Scrubber, key: string | undefined): unknown {
  if (typeof value === 'string') {
    if (node === 'safe') return value;
    if (node === 'recurring') return s.recurring(value);
    if (node === 'location') return s.location(value);
    if (key !== undefined) return s.keyed(key, value);
    return s.text(value);
  }
  if (value === null || typeof value !== 'object' || node === 'safe') return value;
  if (Array.isArray(value)) {
    const items = typeof node === 'object' && 'items' in node ? node.items : node;
    return value.map((v) => walk(v, items, s, undefined));
  }
  // Built key by key rather than spread and pruned: `delete` turns an object into a slow dictionary-mode one.
  const out: Record<string, unknown> = {};
  for (const k in value as Record<string, unknown>) {
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined) continue;
    if (typeof node === 'object' && 'keyed' in node) out[k] = walk(v, 'text', s, k);
    else if (typeof node === 'object' && 'fields' in node)
      out[k] = walk(v, node.fields[k] ?? node.other ?? 'text', s, undefined);
    else out[k] = walk(v, node, s, undefined);
  }
  return out;
}

/**
 * A frame after symbolication: names, files and context recur from stack to stack. Files and
 * functions are code locations: scrubbed of secrets but not of the hosts scripts are served from.
 */
export const frameSchema: ScrubNode = {
  fields: {
    function: 'location',
    file: 'location',
    eval_origin: 'recurring',
    pre_context: { items: 'recurring' },
    context_line: 'recurring',
    post_context: { items: 'recurring' },
    generated: { fields: { function: 'location', file: 'location', line: 'safe', column: 'safe' } },
    line: 'safe',
    column: 'safe',
    in_app: 'safe',
    unmapped_reason: 'safe',
  },
};

const breadcrumbSchema: ScrubNode = {
  fields: { timestamp: 'safe', level: 'safe', data: { keyed: true } },
};

/** An error printed inside the event's stack (`[cause]`, `[errors]`). */
export const linkedExceptionSchema: ScrubNode = {
  fields: { source: 'safe', parent: 'safe', unparsed_line_count: 'safe', stack_frames: { items: frameSchema } },
};

/**
 * What a Sentry SDK's event brings beyond a capture (sentry/event.ts). Request headers, cookies
 * and `extra` are keyed maps (an `Authorization` or `Cookie` value goes whole); the request's URL
 * is a location (the page's host stays, secrets in its query go); the user, query string and body,
 * and contexts are free text. Levels, platform and SDK name are the SDK's
 * own words; debug ids and minified file names say where code came from, as frames do.
 */
const sentrySchema: ScrubNode = {
  fields: {
    kind: 'safe',
    level: 'safe',
    platform: 'safe',
    sdk: 'safe',
    debug_ids: 'safe',
    request: {
      fields: {
        method: 'safe',
        url: 'location',
        headers: { keyed: true },
        cookies: { keyed: true },
        env: { keyed: true },
      },
    },
    extra: { keyed: true },
    contexts: {
      fields: { trace: { fields: { trace_id: 'safe', span_id: 'safe', parent_span_id: 'safe', op: 'safe' } } },
    },
  },
};

/**
 * The stored event but its stack (process.ts scrubs the stack's parts: frame lines and frames once per
 * stack, message lines per event). `release` and `service_name` are validated labels, the trace ids hex.
 */
export const eventHeadSchema: ScrubNode = {
  fields: {
    event_time: 'safe',
    release: 'safe',
    service_name: 'safe',
    trace_id: 'safe',
    span_id: 'safe',
    scrub_counts: 'safe',
    tags: { keyed: true },
    breadcrumbs: { items: breadcrumbSchema },
    // A Sentry event's causes (a stack's printed ones are scrubbed with the stack).
    linked_exceptions: { items: linkedExceptionSchema },
    sentry: sentrySchema,
  },
};

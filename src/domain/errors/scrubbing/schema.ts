// Scrubbing by schema, relay's way (getsentry/relay: every field carries a `pii` attribute and the
// scrubber walks the whole event): every string of a stored event is scrubbed by the policy unless
// its field is marked safe here, so a field added later is scrubbed without anyone naming it.
// Fields marked safe hold no free text: validated labels, ids, times, numbers as strings.
//
// The key rule applies at every depth, as relay's `@password` rule matches the last key of every
// value's path: under any member the schema does not name (a client's key: `extra.form.password`,
// `request.data.user.api_key`, a header), a string, number, object or array under a sensitive key
// is replaced whole by the marker, and the key and the structure around it stay. Booleans and
// nulls hold nothing to hide. Members the schema names are the protocol's own fields, whose names
// say what they hold. An array of `[name, value]` pairs (Sentry's form of headers, cookies and
// query strings) is keyed by each pair's name. A string that is a JSON object or array (a request
// body the SDK sent as text, a breadcrumb's nested data) is walked as one.
//
// The walk keeps its own stack: an event nested thousands deep costs memory, never the call stack.
import { filtered } from './rules.ts';
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
  /** An object: its fields by name, any other field by `other` (text when unset). */
  | { fields: Readonly<Record<string, ScrubNode>>; other?: ScrubNode }
  /** An array of one kind. */
  | { items: ScrubNode };

type Container = Record<string, unknown> | unknown[];

/** A container still to fill: its members, scrubbed, go into `out` in their order. */
interface Task {
  from: object;
  out: Container;
  node: ScrubNode;
}

/** `value` with every string its schema does not mark safe scrubbed; the input is not changed. */
export function scrubBySchema<T>(value: T, node: ScrubNode, s: Scrubber): T {
  const tasks: Task[] = [];
  const out = scrubValue(value, node, undefined, s, tasks);
  for (let task = tasks.pop(); task !== undefined; task = tasks.pop()) fill(task, s, tasks);
  return out as T;
}

/**
 * One value as it is stored: a scalar scrubbed, or an empty container of its kind, queued to be
 * filled. `key`: the member's name when the key rule applies to it (a name the schema does not give).
 */
function scrubValue(value: unknown, node: ScrubNode, key: string | undefined, s: Scrubber, tasks: Task[]): unknown {
  if (node === 'safe' || value === null || value === undefined || typeof value === 'boolean') return value;
  if (key !== undefined && value !== filtered && s.sensitive(key)) return s.redacted();
  if (typeof value === 'string') {
    if (node === 'recurring') return s.recurring(value);
    if (node === 'location') return s.location(value);
    // Only a string that starts as JSON does (or with a space) may be JSON: most are ruled out here.
    const c = value.charCodeAt(0);
    if (c === 123 || c === 91 || c <= 32) {
      const json = jsonText(value, s);
      if (json !== undefined) return json;
    }
    return s.text(value);
  }
  if (typeof value !== 'object') return value;
  const out: Container = Array.isArray(value) ? new Array<unknown>(value.length) : {};
  tasks.push({ from: value, out, node });
  return out;
}

const isPair = (v: unknown): v is [string, unknown] => Array.isArray(v) && v.length === 2 && typeof v[0] === 'string';

function fill({ from, out, node }: Task, s: Scrubber, tasks: Task[]): void {
  const fields = typeof node === 'object' && 'fields' in node ? node : undefined;
  const inner: ScrubNode = typeof node !== 'object' ? node : 'fields' in node ? (node.other ?? 'text') : node.items;
  if (Array.isArray(from)) {
    const list = out as unknown[];
    if (from.length > 0 && from.every(isPair))
      for (let i = 0; i < from.length; i++) {
        const [name, v] = from[i] as [string, unknown];
        list[i] = [scrubValue(name, inner, undefined, s, tasks), scrubValue(v, inner, name, s, tasks)];
      }
    else for (let i = 0; i < from.length; i++) list[i] = scrubValue(from[i], fields ?? inner, undefined, s, tasks);
    return;
  }
  // Built key by key rather than spread and pruned: `delete` turns an object into a slow dictionary-mode one.
  const record = out as Record<string, unknown>;
  for (const k of Object.keys(from)) {
    const v = (from as Record<string, unknown>)[k];
    if (v === undefined) continue;
    const named = fields?.fields[k];
    const scrubbed = scrubValue(v, named ?? inner, named === undefined ? k : undefined, s, tasks);
    // JSON.parse makes `__proto__` an own member; assigning it would set the prototype instead.
    if (k === '__proto__')
      Object.defineProperty(record, k, { value: scrubbed, enumerable: true, writable: true, configurable: true });
    else record[k] = scrubbed;
  }
}

/**
 * A string that is a JSON object or array, walked as one (so its keys are read) and written back
 * when something in it was replaced; undefined for any other string. Nested text can nest JSON
 * only by escaping its quotes, doubling them at each level, so a string bounds how deep this goes.
 */
function jsonText(value: string, s: Scrubber): string | undefined {
  const first = value.trimStart()[0];
  const last = value.trimEnd().at(-1);
  if (!((first === '{' && last === '}') || (first === '[' && last === ']')) || !s.mayHoldSensitiveKey(value))
    return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  const before = s.replaced();
  const scrubbed = scrubBySchema(parsed, 'text', s);
  if (s.replaced() === before) return undefined;
  try {
    return s.text(JSON.stringify(scrubbed));
  } catch {
    // Too deep to write back (JSON.stringify recurses): nothing of it can be kept safely.
    return s.redacted();
  }
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
  fields: { timestamp: 'safe', level: 'safe', message: 'text', category: 'text', type: 'text', data: 'text' },
};

/** An error printed inside the event's stack (`[cause]`, `[errors]`). */
export const linkedExceptionSchema: ScrubNode = {
  fields: {
    source: 'safe',
    parent: 'safe',
    unparsed_line_count: 'safe',
    exception_type: 'text',
    message: 'text',
    stack_frames: { items: frameSchema },
  },
};

/**
 * What a Sentry SDK's event brings beyond a capture (sentry/event.ts). Request headers, cookies,
 * env, body and query string, `user`, `extra` and `contexts` are the client's own keys at every
 * depth (an `Authorization` header, `data.password`, `extra.form.list[0].api_key` go whole); the
 * request's URL is a location (the page's host stays, secrets in its query go). Levels, platform
 * and SDK name are the SDK's own words; debug ids and minified file names say where code came
 * from, as frames do.
 */
const sentrySchema: ScrubNode = {
  fields: {
    kind: 'safe',
    level: 'safe',
    platform: 'safe',
    sdk: 'safe',
    debug_ids: 'safe',
    logger: 'text',
    environment: 'text',
    dist: 'text',
    server_name: 'text',
    user: 'text',
    extra: 'text',
    request: {
      fields: {
        method: 'safe',
        url: 'location',
        query_string: 'text',
        data: 'text',
        headers: 'text',
        cookies: 'text',
        env: 'text',
        fragment: 'text',
      },
    },
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
    exception_type: 'text',
    message: 'text',
    fingerprint: 'text',
    tags: 'text',
    breadcrumbs: { items: breadcrumbSchema },
    // A Sentry event's causes (a stack's printed ones are scrubbed with the stack).
    linked_exceptions: { items: linkedExceptionSchema },
    sentry: sentrySchema,
  },
};

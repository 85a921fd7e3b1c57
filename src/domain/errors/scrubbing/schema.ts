// Scrubbing by schema, relay's way (getsentry/relay: every field carries a `pii` attribute and the
// scrubber walks the whole event): every string of a stored event is scrubbed by the policy unless
// the event's schema (contract/error-event.ts) marks its field otherwise, so a field added later is
// scrubbed without anyone naming it. Fields marked safe hold no free text: validated labels, ids,
// times, numbers as strings.
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
import { z } from 'zod';
import {
  scrubClasses,
  storedEvent,
  storedFrame,
  storedLinkedException,
  type ScrubClass,
} from '../../../contract/error-event.ts';
import { filtered } from './rules.ts';
import type { Scrubber } from './scrub.ts';

/** A class (contract/error-event.ts `ScrubClass`), an object's fields (any other by `other`, text when unset), or an array's items. */
export type ScrubNode =
  ScrubClass | { fields: Readonly<Record<string, ScrubNode>>; other?: ScrubNode } | { items: ScrubNode };

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
 * The tree of a schema of the event (contract/error-event.ts): each field by the scrub class it is
 * marked with, an object by its fields, an array by its items, a record by its values; anything
 * else is text. Read once, when this module loads.
 */
export function scrubTree(schema: z.ZodType): ScrubNode {
  const marked = scrubClasses.get(schema)?.scrub;
  if (marked !== undefined) return marked;
  if (schema instanceof z.ZodOptional) return scrubTree(schema.unwrap() as z.ZodType);
  if (schema instanceof z.ZodArray) return { items: scrubTree(schema.element as z.ZodType) };
  if (schema instanceof z.ZodRecord) {
    const other = scrubTree(schema.valueType as z.ZodType);
    return other === 'text' ? 'text' : { fields: {}, other };
  }
  if (schema instanceof z.ZodObject) {
    const shape = schema.shape as Record<string, z.ZodType>;
    const fields = Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, scrubTree(v)]));
    const catchall = schema.def.catchall as z.ZodType | undefined;
    const other = catchall === undefined ? 'text' : scrubTree(catchall);
    return other === 'text' ? { fields } : { fields, other };
  }
  return 'text';
}

/** A frame after symbolication, scrubbed once per stack. */
export const frameSchema: ScrubNode = scrubTree(storedFrame);

/** An error printed inside the event's stack (`[cause]`, `[errors]`), or a cause its client sent. */
export const linkedExceptionSchema: ScrubNode = scrubTree(storedLinkedException);

/**
 * The stored event. process.ts scrubs it in parts: the stack's (frame lines, frames, linked errors
 * and unparsed lines) once per stack, the rest (its head, and its message lines) per event.
 */
export const eventHeadSchema: ScrubNode = scrubTree(storedEvent);

// An accepted event as it is queued (sealed-payload.ts) and processed (pipeline/process.ts): a
// capture (contract/error-capture.ts), or a Sentry SDK's event mapped to one (sentry/event.ts), which
// may bring code context on its frames, errors linked to the outer one (its causes), and the
// members Sentry's events have beyond a capture's. Both are written here as Postgres can store them.
import type { StackFrameInput, ErrorEventInput } from '../../../contract/error-capture.ts';
import type { SentryParts } from '../../../contract/error-event.ts';

/** A frame as captured: capture's, and the code around it its SDK read itself (sentry/frames.ts). */
export interface CapturedFrame extends StackFrameInput {
  pre_context?: string[];
  context_line?: string;
  post_context?: string[];
}

/** An error linked to the outer one by its client (a Sentry event's causes), its frames as captured. */
export interface CapturedLinked {
  /** `cause`, or `errors[N]` of an AggregateError. */
  source: string;
  exception_type: string;
  stack_frames: CapturedFrame[];
  /** Index in `linked_exceptions` of the error it hangs on; absent: the outer exception. */
  parent?: number;
  message?: string;
}

/** What the pipeline processes. */
export type CapturedEvent = Omit<ErrorEventInput, 'stack_frames'> & {
  stack_frames?: CapturedFrame[];
  /** Outermost first, as stored. */
  linked_exceptions?: CapturedLinked[];
  sentry?: SentryParts;
};

/**
 * Postgres text and jsonb cannot hold U+0000 or unpaired surrogates; both are replaced by U+FFFD
 * so that no client string can make a store fail later. A value with neither is returned as it is
 * (no copy: a batch's events are most of a web process's memory while it is accepted).
 */
export function storable<T>(value: T): T {
  if (typeof value === 'string')
    return (value.isWellFormed() && !value.includes('\0') ? value : value.toWellFormed().replace(/\0/g, '\uFFFD')) as T;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = storable(value[i]);
      if (v !== value[i]) (copy ??= value.slice())[i] = v;
    }
    return (copy ?? value) as T;
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    const clean = entries.map(([k, v]) => [storable(k), storable(v)] as const);
    return clean.some(([k, v], i) => k !== entries[i]![0] || v !== entries[i]![1])
      ? (Object.fromEntries(clean) as T)
      : value;
  }
  return value;
}

// JSON.stringify writes U+0000 as `\u0000` and an unpaired surrogate as `\udXXX` (ES2019's
// well-formed JSON.stringify), and every other character that needs escaping otherwise.
const unstorableEscape = /\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

/**
 * `value` as JSON, `storable`: written once, and walked (to be rewritten) only when the JSON shows
 * a character Postgres cannot store. Walking every event cost single captures and Sentry envelopes
 * ~5% of the web's CPU (bench/errors.ts), for values that almost never hold one. A string that
 * holds the text `\u0000` itself only sends it the slow way.
 */
export function storableJson(value: unknown): string {
  const json = JSON.stringify(value);
  return unstorableEscape.test(json) ? JSON.stringify(storable(value)) : json;
}

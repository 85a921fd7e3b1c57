// What a capture may carry (docs/api.md "Capture fields and capture rules"). Every field is checked here, so a
// bad event is refused at the edge with the field named, and the worker never meets one. Limits the
// resource table leaves open follow Sentry's (message 8192 characters, tag keys 32 and values 200).
import { z } from 'zod';

export const limits = {
  breadcrumbs: 100,
  breadcrumbData: 4096,
  tags: 64,
  stackBytes: 64 * 1024,
  frames: 256,
  message: 8192,
  batch: 1000,
} as const;

/** RFC 3339 needs an offset (or Z); a bare local time is ambiguous and refused. */
export const rfc3339 = z.iso.datetime({
  offset: true,
  message: 'must be an RFC 3339 timestamp such as 2026-11-21T13:00:00Z',
});

const hexId = (length: 16 | 32) =>
  z
    .string()
    .regex(new RegExp(`^[0-9a-f]{${length}}$`), `must be ${length} lower-case hex characters`)
    .refine((v) => /[1-9a-f]/.test(v), 'must not be all zeros (W3C Trace Context)');

export const stackFrameInput = z.strictObject({
  function: z.string().max(1024).optional(),
  file: z.string().max(2048).optional(),
  line: z.number().int().min(1).max(100_000_000).optional(),
  column: z.number().int().min(1).max(100_000_000).optional(),
  in_app: z.boolean().optional(),
});

const scalar = z.union([z.string().max(limits.breadcrumbData), z.number(), z.boolean(), z.null()]);

export const breadcrumbInput = z.strictObject({
  timestamp: rfc3339.optional(),
  type: z.string().max(64).optional(),
  category: z.string().max(256).optional(),
  level: z.enum(['debug', 'info', 'warning', 'error', 'fatal']).optional(),
  message: z.string().max(4096).optional(),
  data: z
    .record(z.string().max(64), scalar)
    .refine((d) => Object.keys(d).length <= 32, 'at most 32 data entries')
    .optional(),
});

// Release and service name select source maps and filter lists: printable, path-safe names.
// The character sets are shared with Sentry's mapping, which normalises into them (sentry/event.ts).
export const labelChars = 'A-Za-z0-9._@+-';
export const tagKeyChars = 'A-Za-z0-9_.:-';
const label = z
  .string()
  .min(1)
  .max(200)
  .regex(new RegExp(`^[A-Za-z0-9][${labelChars}]*$`), 'letters, digits and . _ @ + - only');

// The client's own name for the event (Sentry's `event_id`): 32 lower-case hex, or a UUID in any
// case, normalised to 32 lower-case hex. A capture repeating one already accepted is a no-op.
export const eventId = z.union(
  [
    z.string().regex(/^[0-9a-f]{32}$/),
    z
      .string()
      .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/)
      .transform((v) => v.replace(/-/g, '').toLowerCase()),
  ],
  { message: 'must be 32 lower-case hex characters or a UUID' },
);

export const errorEventInput = z.strictObject({
  event_id: eventId.optional(),
  event_time: rfc3339,
  exception_type: z.string().min(1).max(256),
  message: z.string().max(limits.message).optional(),
  stack: z
    .string()
    .refine((s) => Buffer.byteLength(s, 'utf8') <= limits.stackBytes, `must be at most ${limits.stackBytes} bytes`)
    .optional(),
  stack_frames: z.array(stackFrameInput).max(limits.frames).optional(),
  service_name: label.optional(),
  release: label.optional(),
  breadcrumbs: z.array(breadcrumbInput).max(limits.breadcrumbs, `at most ${limits.breadcrumbs} breadcrumbs`).optional(),
  tags: z
    .record(
      z.string().regex(new RegExp(`^[${tagKeyChars}]{1,32}$`), 'tag keys are 1-32 of A-Z a-z 0-9 _ . : -'),
      z.string().max(200),
    )
    .refine((t) => Object.keys(t).length <= limits.tags, `at most ${limits.tags} tags`)
    .optional(),
  fingerprint: z.string().min(1).max(512).optional(),
  trace_id: hexId(32).optional(),
  span_id: hexId(16).optional(),
});

export type ErrorEventInput = z.infer<typeof errorEventInput>;
export type StackFrameInput = z.infer<typeof stackFrameInput>;
export type BreadcrumbInput = z.infer<typeof breadcrumbInput>;

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

// What a capture may carry (docs/api.md "Capture fields"): the stored event's own fields a client
// sends (error-event.ts), each with its limit. Every field is checked here, so a bad event is
// refused at the edge with the field named, and the worker never meets one. Limits the API leaves
// open follow Sentry's (message 8192 characters, tag keys 32 and values 200); a Sentry SDK's event
// is cut to the same limits rather than refused (domain/errors/sentry/event.ts).
import { z } from 'zod';
import { breadcrumbLevels } from './error-event.ts';

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
  level: z.enum(breadcrumbLevels).optional(),
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

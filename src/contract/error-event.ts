// An error event as it is stored and read back (docs/api.md "Error tracking"), described once. Every
// field carries its scrub class, as getsentry/relay marks its protocol types `pii = "true" | "maybe"`:
// the worker's scrubber walks a stored event by the classes read from this schema
// (domain/errors/scrubbing/schema.ts), the stored body's type is this schema's, and the API's
// ErrorEvent is this schema with the resource's own members. A field added here is scrubbed as free
// text unless it is marked otherwise. What a capture may carry, and its limits, is error-capture.ts.
import { z } from 'zod';

/**
 * What the scrubber does to a value: `safe` holds no personal data (validated labels, ids, times,
 * numbers) and is kept; `text` is free text, scrubbed by the policy's rules (the default: a field
 * not marked is text); `recurring` is text that recurs from event to event (context lines), whose
 * scrubbed form the policy remembers; `location` is a recurring code location (a frame's file and
 * function), scrubbed by every rule but the host-name ones.
 */
export type ScrubClass = 'safe' | 'text' | 'recurring' | 'location';

/** The scrub class of each marked schema; read by the scrubber, never by OpenAPI (a registry of its own). */
export const scrubClasses = z.registry<{ scrub: ScrubClass }>();

const mark =
  (scrub: ScrubClass) =>
  <T extends z.ZodType>(schema: T): T => {
    scrubClasses.add(schema, { scrub });
    return schema;
  };
const safe = mark('safe');
const recurring = mark('recurring');
const location = mark('location');

export const unmappedReasons = [
  'no_release',
  'no_maps_for_release',
  'no_map_for_file',
  'no_position',
  'position_outside_map',
  'malformed_map',
  'map_unavailable',
] as const;

/** A frame after symbolication: names, files and context recur from stack to stack. */
export const storedFrame = z
  .object({
    function: location(z.string()).optional(),
    file: location(z.string()).optional(),
    line: safe(z.number()).optional(),
    column: safe(z.number()).optional(),
    in_app: safe(z.boolean()),
    pre_context: z.array(recurring(z.string())).optional(),
    context_line: recurring(z.string()).optional(),
    post_context: z.array(recurring(z.string())).optional(),
    generated: z
      .object({
        function: location(z.string()).optional(),
        file: location(z.string()).optional(),
        line: safe(z.number()).optional(),
        column: safe(z.number()).optional(),
      })
      .optional()
      .meta({ description: 'The position as the runtime printed it, when the frame was mapped' }),
    unmapped_reason: safe(z.enum(unmappedReasons)).optional(),
    eval_origin: recurring(z.string())
      .optional()
      .meta({ description: 'The eval chain as printed, when the code ran in eval or new Function' }),
  })
  .meta({ id: 'StackFrame' });

/** An error linked to the outer one: printed in its stack (`[cause]`, `[errors]`), or a Sentry event's cause. */
export const storedLinkedException = z
  .object({
    source: safe(z.string()).meta({ description: '`cause`, or `errors[N]` of an AggregateError' }),
    parent: safe(z.number().int())
      .optional()
      .meta({ description: 'Index in linked_exceptions of the error it hangs on; absent: the outer exception' }),
    exception_type: z.string(),
    message: z.string().optional(),
    stack_frames: z.array(storedFrame),
    unparsed_line_count: safe(z.number().int()),
  })
  .meta({ id: 'LinkedException' });

export const breadcrumbLevels = ['debug', 'info', 'warning', 'error', 'fatal'] as const;

export const storedBreadcrumb = z.object({
  timestamp: safe(z.string()).optional(),
  type: z.string().optional(),
  category: z.string().optional(),
  level: safe(z.enum(breadcrumbLevels)).optional(),
  message: z.string().optional(),
  data: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(),
});

const bag = z.record(z.string(), z.unknown());

/**
 * What a Sentry SDK's event brought beyond a capture (domain/errors/sentry/event.ts). Request
 * headers, cookies, env, body and query string, `user`, `extra` and `contexts` are the client's own
 * keys at every depth (an `Authorization` header, `data.password`, `extra.form.list[0].api_key` go
 * whole); the request's URL is a location (the page's host stays, secrets in its query go). Levels,
 * platform and SDK name are the SDK's own words; debug ids and minified file names say where code
 * came from, as frames do. Objects keep the members they do not name.
 */
export const storedSentryParts = z.looseObject({
  kind: safe(z.literal('message'))
    .optional()
    .meta({ description: '`message` for captureMessage events (no exception)' }),
  level: safe(z.string())
    .optional()
    .meta({ description: "Sentry's level as the SDK sent it: fatal, error, warning, info…" }),
  platform: safe(z.string()).optional(),
  logger: z.string().optional(),
  environment: z.string().optional(),
  dist: z.string().optional(),
  server_name: z.string().optional(),
  user: bag.optional(),
  request: z
    .looseObject({
      method: safe(z.unknown()).optional(),
      url: location(z.unknown()).optional(),
      query_string: z.unknown().optional(),
      data: z.unknown().optional(),
      headers: z.unknown().optional(),
      cookies: z.unknown().optional(),
      env: z.unknown().optional(),
      fragment: z.unknown().optional(),
    })
    .optional()
    .meta({ description: 'The HTTP request, headers as an object' }),
  contexts: z
    .looseObject({
      trace: z
        .looseObject({
          trace_id: safe(z.unknown()).optional(),
          span_id: safe(z.unknown()).optional(),
          parent_span_id: safe(z.unknown()).optional(),
          op: safe(z.unknown()).optional(),
        })
        .optional(),
    })
    .optional()
    .meta({ description: 'os, browser, runtime, device, app, trace, and any other context' }),
  extra: bag.optional(),
  sdk: safe(z.object({ name: z.string().optional(), version: z.string().optional() })).optional(),
  debug_ids: safe(z.record(z.string(), z.string()))
    .optional()
    .meta({ description: '`debug_meta.images` of type sourcemap: minified file → debug id' }),
});

/** The stored event; `stack`, its frames, its linked errors and unparsed lines are scrubbed as the stack's. */
export const storedEvent = z.object({
  event_time: safe(z.string()),
  exception_type: z.string(),
  message: z.string().optional(),
  stack: z.string().optional(),
  stack_frames: z.array(storedFrame),
  service_name: safe(z.string()).optional(),
  release: safe(z.string()).optional(),
  breadcrumbs: z.array(storedBreadcrumb),
  tags: z.record(z.string(), z.string()),
  fingerprint: z.string().optional(),
  trace_id: safe(z.string()).optional(),
  span_id: safe(z.string()).optional(),
  linked_exceptions: z.array(storedLinkedException).optional().meta({
    description: 'Errors printed in the stack as `[cause]` or `[errors]`, or sent as causes, outermost first',
  }),
  unparsed_line_count: safe(z.number().int())
    .optional()
    .meta({ description: 'Lines of `stack` that no known format reads (set when the stack was parsed)' }),
  unparsed_lines: z.array(z.string()).optional().meta({ description: 'The first 50 of those lines, scrubbed' }),
  scrub_counts: safe(z.record(z.string(), z.number())).meta({
    description: 'How many values each scrubbing rule replaced',
  }),
  sentry: storedSentryParts.optional().meta({
    description:
      'For events from a Sentry SDK: level, platform, environment, user, request, contexts, extra, sdk (scrubbed); the same as the members of those names',
  }),
});

export type EventBody = z.output<typeof storedEvent>;
export type StoredFrame = z.output<typeof storedFrame>;
export type UnmappedReason = (typeof unmappedReasons)[number];
export type LinkedExceptionBody = z.output<typeof storedLinkedException>;
export type Breadcrumb = z.output<typeof storedBreadcrumb>;
export type SentryParts = z.output<typeof storedSentryParts>;

/**
 * The members of the stored `sentry` object a resource also answers at its top level, under the
 * names Sentry's own event JSON gives them (https://develop.sentry.dev/sdk/data-model/event-payloads/).
 */
export const sentryTopLevel = storedSentryParts.pick({
  level: true,
  platform: true,
  logger: true,
  environment: true,
  dist: true,
  server_name: true,
  user: true,
  request: true,
  contexts: true,
  extra: true,
  sdk: true,
}).shape;

/** An ErrorEvent as the API answers it: the stored event, named, with the Sentry members at its top level. */
export const eventResource = z
  .object({
    name: z.string(),
    uid: z.string(),
    meta: z.object({ create_time: z.string(), receive_time: z.string() }),
    ...storedEvent.shape,
    ...sentryTopLevel,
  })
  .meta({ id: 'ErrorEvent' });

// Request and response shapes of the error-tracking routes (SPEC.md Error Group / Error Event,
// CONTRACT.md "Error tracking"); the same schemas validate requests and feed the OpenAPI document.
import { z } from 'zod';
import { envParams } from '../tenancy/schema.ts';
import { errorEventInput } from '../../../domain/observability/intake/event-schema.ts';
import type { GroupRow, EventRow } from '../../../domain/observability/groups/queries.ts';

export { envParams };

const groupId = z.string().regex(/^eg_[0-9a-z]{26}$/, 'an error group id such as eg_01j…');
const eventUid = z.string().regex(/^err_[a-z0-9]{2}[0-9a-z]{26}$/, 'an event uid such as err_c001j…');

export const groupParams = envParams.extend({ error_group: groupId });
export const eventsParams = groupParams;
/** AIP-159: `-` reads an event by uid whatever its group. */
export const eventParams = envParams.extend({ error_group: z.union([groupId, z.literal('-')]), error_event: eventUid });
export const releaseParams = envParams.extend({
  release: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._@+-]*$/),
});

export const pageQuery = z.object({
  page_size: z.coerce.number().int().min(1).max(1000).default(50),
  page_token: z.string().max(512).optional(),
});

export const captureBody = z.strictObject({ error_event: errorEventInput });
export const batchCaptureBody = z.strictObject({ error_events: z.array(z.unknown()).min(1).max(1000) });

export const captureResponse = z.object({ uid: z.string() }).meta({ id: 'CaptureResult' });
export const batchCaptureResponse = z
  .object({
    results: z.array(
      z.union([
        z.object({ uid: z.string() }),
        z.object({
          error: z.object({ code: z.literal('invalid_request'), message: z.string(), details: z.unknown().optional() }),
        }),
      ]),
    ),
  })
  .meta({ id: 'BatchCaptureResult' });

const state = z.enum(['unresolved', 'acknowledged', 'resolved']);

export const groupsQuery = pageQuery.extend({
  state: state.optional(),
  service_name: z.string().max(200).optional(),
  last_seen_after: z.iso.datetime({ offset: true }).optional(),
  last_seen_before: z.iso.datetime({ offset: true }).optional(),
});

const frame = z
  .object({
    function: z.string().optional(),
    file: z.string().optional(),
    line: z.number().optional(),
    column: z.number().optional(),
    in_app: z.boolean(),
    pre_context: z.array(z.string()).optional(),
    context_line: z.string().optional(),
    post_context: z.array(z.string()).optional(),
    generated: z.record(z.string(), z.unknown()).optional(),
    unmapped_reason: z.string().optional(),
    eval_origin: z
      .string()
      .optional()
      .meta({ description: 'The eval chain as printed, when the code ran in eval or new Function' }),
  })
  .meta({ id: 'StackFrame' });

const linkedException = z
  .object({
    source: z.string().meta({ description: '`cause`, or `errors[N]` of an AggregateError' }),
    parent: z
      .number()
      .int()
      .optional()
      .meta({ description: 'Index in linked_exceptions of the error it hangs on; absent: the outer exception' }),
    exception_type: z.string(),
    message: z.string().optional(),
    stack_frames: z.array(frame),
    unparsed_line_count: z.number().int(),
  })
  .meta({ id: 'LinkedException' });

export const groupResource = z
  .object({
    name: z.string(),
    uid: z.string(),
    fingerprint: z.string(),
    title: z.string(),
    culprit: z.string(),
    service_name: z.string(),
    state,
    first_seen_time: z.string(),
    last_seen_time: z.string(),
    occurrence_count: z.number().int(),
    last_release: z.string(),
    etag: z.string(),
    resolve_time: z.string().optional(),
    grouping: z.object({
      method: z.string(),
      frames: z.array(z.object({ function: z.string().optional(), file: z.string().optional() })),
    }),
  })
  .meta({ id: 'ErrorGroup' });

export const eventResource = z
  .object({
    name: z.string(),
    uid: z.string(),
    meta: z.object({ create_time: z.string(), receive_time: z.string() }),
    event_time: z.string(),
    exception_type: z.string(),
    message: z.string().optional(),
    stack: z.string().optional(),
    stack_frames: z.array(frame),
    service_name: z.string().optional(),
    release: z.string().optional(),
    breadcrumbs: z.array(z.record(z.string(), z.unknown())),
    tags: z.record(z.string(), z.string()),
    fingerprint: z.string().optional(),
    trace_id: z.string().optional(),
    span_id: z.string().optional(),
    scrub_counts: z.record(z.string(), z.number()),
    linked_exceptions: z
      .array(linkedException)
      .optional()
      .meta({ description: 'Errors printed in the stack as `[cause]` or `[errors]`, outermost first' }),
    unparsed_line_count: z
      .number()
      .int()
      .optional()
      .meta({ description: 'Lines of `stack` that no known format reads (set when the stack was parsed)' }),
    unparsed_lines: z.array(z.string()).optional().meta({ description: 'The first 50 of those lines, scrubbed' }),
  })
  .meta({ id: 'ErrorEvent' });

export const groupList = z.object({ error_groups: z.array(groupResource), next_page_token: z.string().optional() });
export const eventList = z.object({ error_events: z.array(eventResource), next_page_token: z.string().optional() });

export const triageBody = z.strictObject({ etag: z.string().min(1).max(128).optional() }).optional();

export function groupView(envName: string, g: GroupRow): z.input<typeof groupResource> {
  return {
    name: `${envName}/error_groups/${g.id}`,
    uid: g.id,
    fingerprint: g.fingerprint,
    title: g.title,
    culprit: g.culprit,
    service_name: g.service_name,
    state: g.state,
    first_seen_time: g.first_seen_time.toISOString(),
    last_seen_time: g.last_seen_time.toISOString(),
    occurrence_count: Number(g.occurrence_count),
    last_release: g.last_release,
    etag: g.etag,
    ...(g.resolve_time ? { resolve_time: new Date(g.resolve_time).toISOString() } : {}),
    grouping: g.grouping as z.input<typeof groupResource>['grouping'],
  };
}

export function eventView(envName: string, e: EventRow): z.input<typeof eventResource> {
  return {
    name: `${envName}/error_groups/${e.group_id}/error_events/${e.uid}`,
    uid: e.uid,
    meta: { create_time: e.create_time.toISOString(), receive_time: e.receive_time.toISOString() },
    ...e.body,
    breadcrumbs: e.body.breadcrumbs as Record<string, unknown>[],
  };
}

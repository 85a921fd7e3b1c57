// Request and response shapes of the error-tracking routes (docs/api.md "Resources" and "Error
// tracking"); the same schemas validate requests and feed the OpenAPI document. The presenters that
// turn stored rows into them live beside the rows (domain/errors/*/present.ts).
import { z } from 'zod';
import { errorEventInput } from './error-capture.ts';
import { eventResource, type LinkedExceptionBody, type StoredFrame } from './error-event.ts';
import { scrubbingPolicy } from './scrubbing.ts';
import { pageOf, pageQuery } from './pages.ts';
import { envParams } from './tenancy.ts';

export { envParams, pageQuery, eventResource };

const groupId = z.string().regex(/^eg_[0-9a-z]{26}$/, 'an error group id such as eg_01j…');
const eventUid = z.string().regex(/^err_[a-z0-9]{2}[0-9a-z]{26}$/, 'an event uid such as err_c001j…');

export const groupParams = envParams.extend({ error_group: groupId });
export const eventsParams = groupParams;
/** AIP-159: `-` reads an event by uid whatever its group. */
export const eventParams = envParams.extend({
  error_group: z.union([groupId, z.literal('-')]),
  error_event: z.union([eventUid, z.string().regex(/^[0-9a-f]{32}$/)], {
    message: 'an event uid such as err_c001j…, or the 32-hex event_id its SDK gave it',
  }),
});
/**
 * The longest name (URL or path) of a release's file, in bytes of UTF-8: the name is in the unique
 * index of its table, and Postgres refuses a B-tree entry over ~2.7 kB (a third of a page), so
 * 2048 characters that take 3 bytes each failed the insert.
 */
export const releaseFileNameMaxBytes = 2048;

/** A release file's name: 2048 characters, and as many bytes of UTF-8 (its row's index holds it). */
export const releaseFileName = z
  .string()
  .min(1)
  .max(releaseFileNameMaxBytes)
  .refine((s) => Buffer.byteLength(s) <= releaseFileNameMaxBytes, {
    message: `at most ${releaseFileNameMaxBytes} bytes of UTF-8`,
  });
export const releaseParams = envParams.extend({
  release: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._@+-]*$/),
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

export const errorGroupState = z.enum(['unresolved', 'acknowledged', 'resolved']);

/** The orders groups list in, newest or most first (docs/api.md "Search"). */
export const errorGroupSort = z.enum(['last_seen', 'first_seen', 'events', 'users']);

export const groupsQuery = pageQuery.extend({
  // The search's own bound (1024 bytes) is the parser's, refused naming the term like any other
  // refusal of the search; this one only keeps a huge parameter from reaching it.
  q: z
    .string()
    .max(8192)
    .optional()
    .meta({
      description:
        'Search: space-separated terms that must all hold. A word or "a phrase" is looked for in the type, ' +
        'message and culprit (any case); is:unresolved|acknowledged|resolved, release:, first_release:, ' +
        'service:, level:, user: (an id or email) and any other key:value (a tag, browser:Chrome) filter; ' +
        'a value may be "quoted"; !key:value negates. At most 20 terms and 1024 bytes.',
      example: 'is:unresolved release:shop@1.4.0 browser:"Mobile Safari" !level:warning checkout',
    }),
  sort: errorGroupSort.default('last_seen').meta({
    description:
      'last_seen (the default) or first_seen: newest first; events: most occurrences first; users: most users first',
    example: 'events',
  }),
  state: errorGroupState.optional(),
  service_name: z.string().max(200).optional(),
  last_seen_after: z.iso.datetime({ offset: true }).optional(),
  last_seen_before: z.iso.datetime({ offset: true }).optional(),
});

export const groupResource = z
  .object({
    name: z.string(),
    uid: z.string(),
    fingerprint: z.string(),
    title: z.string(),
    culprit: z.string(),
    service_name: z.string(),
    state: errorGroupState,
    first_seen_time: z.string(),
    last_seen_time: z.string(),
    occurrence_count: z.number().int(),
    user_count: z
      .number()
      .int()
      .meta({ description: 'Distinct users of its events (by id, else email, username or IP address); 0 when none' }),
    last_release: z.string(),
    etag: z.string(),
    resolve_time: z.string().optional(),
    grouping: z.object({
      method: z.string(),
      frames: z.array(z.object({ function: z.string().optional(), file: z.string().optional() })),
    }),
  })
  .meta({ id: 'ErrorGroup' });

export const groupList = pageOf('error_groups', groupResource);
export const eventList = pageOf('error_events', eventResource);

export const triageBody = z.strictObject({ etag: z.string().min(1).max(128).optional() }).optional();

/** The most groups one `:batchUpdate` changes (docs/api.md "Bulk triage"). */
export const batchTriageMax = 100;

/** A group as a batch names it: its id, or its full resource name (`orgs/…/error_groups/eg_…`). */
const groupRef = z
  .string()
  .regex(/^(?:orgs\/[^/]+\/projects\/[^/]+\/envs\/[^/]+\/error_groups\/)?eg_[0-9a-z]{26}$/, {
    message: 'an error group id such as eg_01j…, or its name orgs/…/envs/…/error_groups/eg_01j…',
  })
  .meta({ description: "The group's id, or its resource name", example: 'eg_01jd8x2k3m4n5p6q7r8s9t0v1w' });

/** The id a batch item names, whichever form it was written in. */
export const groupIdOfRef = (ref: string): string => ref.slice(ref.lastIndexOf('/') + 1);

export const batchTriageBody = z
  .strictObject({
    groups: z
      .array(
        z.strictObject({
          name: groupRef,
          etag: z
            .string()
            .min(1)
            .max(128)
            .meta({ description: 'The etag read from the group; the group changes only while it still matches' }),
        }),
      )
      .min(1)
      .max(batchTriageMax)
      .meta({ description: `1 to ${batchTriageMax} groups, each named once` }),
    action: z.enum(['acknowledge', 'resolve', 'reopen']).meta({ description: 'The triage call applied to each group' }),
  })
  .superRefine((b, ctx) => {
    // A group named twice would be triaged against its own first result: refused whole, as a typo.
    const seen = new Map<string, number>();
    b.groups.forEach((g, i) => {
      const id = groupIdOfRef(g.name);
      const first = seen.get(id);
      if (first === undefined) seen.set(id, i);
      else ctx.addIssue({ code: 'custom', path: ['groups', i, 'name'], message: `names the group of groups.${first}` });
    });
  })
  .meta({
    id: 'BatchTriageRequest',
    examples: [
      {
        groups: [
          { name: 'eg_01jd8x2k3m4n5p6q7r8s9t0v1w', etag: '3f9a1c0b7d2e4a58' },
          {
            name: 'orgs/acme/projects/shop/envs/prod/error_groups/eg_01jd8x2k3m4n5p6q7r8s9t0v1x',
            etag: 'a1b2c3d4e5f60718',
          },
        ],
        action: 'resolve',
      },
    ],
  });

/** Why one group of a batch did not change: the code the single triage call answers with. */
export const batchTriageError = z
  .object({
    error: z.object({
      code: z.enum(['ETAG_MISMATCH', 'INVALID_STATE', 'not_found']),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .meta({
    id: 'BatchTriageError',
    description: 'ETAG_MISMATCH (the group changed since its etag was read), INVALID_STATE, or not_found',
  });

export const batchTriageResponse = z
  .object({
    results: z
      .array(z.union([groupResource, batchTriageError]))
      .meta({ description: 'One per group sent, in the order sent: the changed group with its new etag, or why not' }),
  })
  .meta({
    id: 'BatchTriageResult',
    examples: [
      {
        results: [
          {
            name: 'orgs/acme/projects/shop/envs/prod/error_groups/eg_01jd8x2k3m4n5p6q7r8s9t0v1w',
            uid: 'eg_01jd8x2k3m4n5p6q7r8s9t0v1w',
            fingerprint: '5d41402abc4b2a76b9719d911017c592',
            title: 'TypeError: cart.items is undefined',
            culprit: 'applyCoupon (src/checkout.ts)',
            service_name: 'web',
            state: 'resolved',
            first_seen_time: '2026-11-01T10:00:00.000Z',
            last_seen_time: '2026-11-02T09:30:00.000Z',
            occurrence_count: 42,
            last_release: 'shop@1.4.2',
            etag: '9c8b7a6f5e4d3c2b',
            resolve_time: '2026-11-02T10:00:00.000Z',
            grouping: { method: 'in_app_frames', frames: [{ function: 'applyCoupon', file: 'src/checkout.ts' }] },
          },
          {
            error: {
              code: 'ETAG_MISMATCH',
              message: 'the group changed since you read it; read it again and retry with its current etag',
              details: { current_state: 'acknowledged' },
            },
          },
        ],
      },
    ],
  });

export type ErrorGroupState = z.output<typeof errorGroupState>;
export type ErrorGroupSort = z.output<typeof errorGroupSort>;
export type StackFrame = StoredFrame;
export type LinkedException = LinkedExceptionBody;
export type ErrorGroup = z.output<typeof groupResource>;
export type ErrorEvent = z.output<typeof eventResource>;
/** What an application sends: `event_id` is optional, the SDK makes one when absent. */
export type CaptureEvent = z.input<typeof errorEventInput>;
export type BatchResult = z.output<typeof batchCaptureResponse>['results'][number];
export type BatchTriageAction = z.output<typeof batchTriageBody>['action'];
export type BatchTriageResult = z.output<typeof batchTriageResponse>['results'][number];
/** A scrubbing policy as stored and answered; a PUT may leave out any field (its default applies). */
export type ScrubbingPolicy = z.output<typeof scrubbingPolicy>;
export type ScrubbingPolicyResource = z.output<typeof policyResource>;

/** Source maps and minified files, the files of a release; one schema per collection, for OpenAPI. */
export const releaseFileResource = (id: string) =>
  z
    .object({
      name: z.string(),
      release: z.string(),
      file: z.string(),
      size_bytes: z.number().int(),
      sha256: z.string(),
      create_time: z.string(),
    })
    .meta({ id });
export const sourceMapResource = releaseFileResource('SourceMap');
export const minifiedSourceResource = releaseFileResource('MinifiedSource');
export type ReleaseFile = z.output<ReturnType<typeof releaseFileResource>>;

/** The environment's scrubbing policy, answered with every default rule for reference. */
export const policyResource = z
  .object({
    name: z.string(),
    policy: scrubbingPolicy,
    /** Every default rule, for reference. */
    default_rules: z.array(z.string()),
    update_time: z.string().optional(),
  })
  .meta({ id: 'ScrubbingPolicyResource' });

/** docs/api.md "Retention" and "Backpressure": how long events stay, how many may wait. */
export const errorSettingsBody = z.strictObject({
  retention_days: z.number().int().min(1).max(400).optional(),
  max_pending: z.number().int().min(1000).max(10_000_000).optional(),
});
export const errorSettingsResource = z
  .object({
    name: z.string(),
    retention_days: z.number().int(),
    max_pending: z.number().int(),
    update_time: z.string().optional(),
  })
  .meta({ id: 'ErrorSettings' });
export type ErrorSettingsResource = z.output<typeof errorSettingsResource>;

// One accepted event through the pipeline (docs/api.md "Error tracking"), in four steps, each done
// once per exception:
//   1. parse: the stack text splits into the event's message lines and the stack's body (stack/);
//   2. symbolicate: every exception's frames through the release's maps (exceptions.ts);
//   3. scrub: the stored event by the scrub classes of its schema (scrubbing/schema.ts), before
//      grouping and storage, so no secret reaches a key, a title or a row;
//   4. group and pack: the group key (fingerprint.ts), and the stored body (event-codec.ts).
// The stack's part (its frames, the errors printed in it, its frame lines) goes through them once
// per stack and is kept (stacks.ts); an event pays for what is its own: its message lines, the
// errors its client linked (a Sentry event's causes), tags, breadcrumbs. Each step is a function of
// its input and of the caches the worker passes in (caches.ts); nothing here keeps state.
import type { EventBody, LinkedExceptionBody } from '../../../contract/error-event.ts';
import type { CapturedEvent } from '../intake/captured-event.ts';
import { cutBreadcrumbData } from '../sentry/event.ts';
import { eventHeadSchema, scrubBySchema } from '../scrubbing/schema.ts';
import { packBody, type EventHead } from './event-codec.ts';
import { mapUnavailable, symbolicateLinked } from './exceptions.ts';
import { groupKey, type Grouping } from './fingerprint.ts';
import type { KeyFrame, ReadyStack } from './stack-cache.ts';
import { stackOf, type StackInput } from './stacks.ts';
import { splitStack } from './stack/index.ts';

export type { EventBody };
export type { KeyFrame } from './stack-cache.ts';

export interface ProcessedEvent {
  fingerprint: string;
  grouping: Grouping;
  culprit: string;
  title: string;
  /** The body but its stack's parts, which are in `stored` only. */
  head: EventHead & { stack?: string };
  frames: KeyFrame[];
  /** A map of a frame the kept stack does not hold (a linked exception's) could not be read. */
  mapUnavailable?: boolean;
  /** The whole body as it is stored: deflated JSON (event-codec.ts). */
  stored: Buffer;
}

/** What one event is processed with: its release's maps, its environment's policy, the worker's caches. */
export type PipelineInput = StackInput;

/** The stored event but its stack's parts, as the capture gives it: scrubbed next, whole. */
function headOf(input: CapturedEvent, linked: LinkedExceptionBody[] | undefined): EventHead {
  const head: EventHead = {
    event_time: new Date(input.event_time).toISOString(),
    exception_type: input.exception_type,
    breadcrumbs: input.breadcrumbs ?? [],
    tags: input.tags ?? {},
    scrub_counts: {},
  };
  if (input.message !== undefined) head.message = input.message;
  if (input.fingerprint !== undefined) head.fingerprint = input.fingerprint;
  if (input.service_name !== undefined) head.service_name = input.service_name;
  if (input.release !== undefined) head.release = input.release;
  if (input.trace_id !== undefined) head.trace_id = input.trace_id;
  if (input.span_id !== undefined) head.span_id = input.span_id;
  if (input.sentry !== undefined) head.sentry = input.sentry;
  if (linked !== undefined && linked.length > 0) head.linked_exceptions = linked;
  return head;
}

/** Step 4: the group key and title of the scrubbed event, and its body packed for storage. */
function groupAndPack(
  head: EventHead,
  stack: ReadyStack,
  messageLines: string | undefined,
  messageEvent: boolean,
): ProcessedEvent {
  const key = groupKey(
    { exception_type: head.exception_type, message: head.message, fingerprint: head.fingerprint, frames: stack.frames },
    stack.keys,
  );
  // A Sentry message event (captureMessage) is titled by its message alone, as Sentry titles it.
  const title = (
    messageEvent && head.message
      ? head.message
      : head.message
        ? `${head.exception_type}: ${head.message}`
        : head.exception_type
  ).slice(0, 1024);
  const stored = packBody(stack.segment, messageLines, head);
  const shown: ProcessedEvent['head'] = head;
  if (messageLines !== undefined) shown.stack = messageLines + (stack.frameLines ?? '');
  return { ...key, title, head: shown, frames: stack.frames, stored };
}

export async function processEvent(input: CapturedEvent, p: PipelineInput): Promise<ProcessedEvent> {
  const s = p.policy.scrubber();
  // 1. Parse: the stack text's message lines are the event's own, its frame lines the stack's.
  const split = input.stack === undefined ? undefined : splitStack(input.stack, input);
  const given = input.stack_frames && input.stack_frames.length > 0 ? input.stack_frames : undefined;
  // 1-4 of the stack's part, once per stack; what it scrubbed is counted in `s`.
  const stack = await stackOf(given, split?.frames, input.release, p, s);
  // 2. Symbolicate the errors the client linked.
  const linked =
    input.linked_exceptions &&
    (await symbolicateLinked(
      input.linked_exceptions.map((l) => ({ ...l, frames: l.stack_frames, unparsed_line_count: 0 })),
      input.release,
      p,
    ));
  // 3. Scrub what is the event's own: every string unless its schema marks it otherwise.
  const head = scrubBySchema(headOf(input, linked), eventHeadSchema, s);
  cutBreadcrumbData(head.breadcrumbs);
  const messageLines = split ? s.text(split.message) : undefined;
  head.scrub_counts = s.counts();
  // 4. Group and pack.
  const out = groupAndPack(head, stack, messageLines, input.sentry?.kind === 'message');
  if (linked?.some((l) => mapUnavailable(l.stack_frames))) out.mapUnavailable = true;
  return out;
}

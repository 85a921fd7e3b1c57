// One accepted event through the pipeline (docs/api.md "Capture fields and capture rules"), as stages:
//   parse (stack/) → symbolicate (symbolicate.ts) → scrub (scrubbing/) → group (fingerprint.ts),
// and the codec (event-codec.ts) packs what the worker stores. Each stage is a function of its
// input and of the caches the worker passes in (caches.ts); nothing here keeps state. Scrubbing
// comes before grouping and storage, so no secret reaches a key, a title or a row.
import { createHash } from 'node:crypto';
import type { ErrorEventInput } from '../intake/event-schema.ts';
import { cutBreadcrumbData, type SentryCause, type SentryEventInput } from '../sentry/event.ts';
import type { CompiledPolicy, Scrubber } from '../scrubbing/scrub.ts';
import { eventHeadSchema, frameSchema, linkedExceptionSchema, scrubBySchema } from '../scrubbing/schema.ts';
import type { PipelineCaches } from './caches.ts';
import { packBody, type EventHead, type LinkedExceptionBody, type StackEncoder } from './event-codec.ts';
import { groupKey, stackKeys, type Grouping } from './fingerprint.ts';
import { isInApp } from './paths.ts';
import type { KeyFrame, ReadyStack } from './stack-cache.ts';
import { parseStackBody, splitStack, type ParsedStack } from './stack/index.ts';
import { symbolicateFrame, type MapLoader, type MapRef, type RawFrame, type StackFrame } from './symbolicate.ts';

export type { Breadcrumb, EventBody, LinkedExceptionBody } from './event-codec.ts';
export type { KeyFrame } from './stack-cache.ts';

export interface ProcessedEvent {
  fingerprint: string;
  grouping: Grouping;
  culprit: string;
  title: string;
  /** The body but its stack's parts, which are in `stored` only. */
  head: EventHead & { stack?: string };
  frames: KeyFrame[];
  /** A map of a frame the kept stack does not hold (a Sentry cause's) could not be read. */
  mapUnavailable?: boolean;
  /** The whole body as it is stored: deflated JSON (event-codec.ts). */
  stored: Buffer;
}

/** What one event is processed with: its release's maps, its environment's policy, the worker's caches. */
export interface PipelineInput {
  maps: readonly MapRef[];
  load: MapLoader;
  policy: CompiledPolicy;
  caches: Pick<PipelineCaches, 'stacks' | 'encoder'>;
}

// Symbolicate: frames through the release's maps, each marked in-app by its mapped file unless the
// caller said so.
async function symbolicate(
  raw: readonly RawFrame[],
  release: string | undefined,
  p: PipelineInput,
  inApp: (raw: RawFrame, mapped: StackFrame) => boolean,
): Promise<StackFrame[]> {
  const out: StackFrame[] = [];
  for (const r of raw) {
    const mapped = await symbolicateFrame(r, release, p.maps, p.load);
    mapped.in_app = inApp(r, mapped);
    if (r.eval_origin !== undefined) mapped.eval_origin = r.eval_origin;
    out.push(mapped);
  }
  return out;
}

const unavailable = (frames: readonly StackFrame[]): boolean =>
  frames.some((f) => f.unmapped_reason === 'map_unavailable');

/**
 * What a parsed stack holds beside the outer exception's frames, as the JSON members the stored
 * body gets: its linked errors (frames mapped and scrubbed, never grouped: the outer exception
 * stays the one grouped, as Sentry groups a chained exception by its outermost) and its unparsed lines.
 */
async function linkedMembers(
  parsed: ParsedStack,
  release: string | undefined,
  p: PipelineInput,
  s: Scrubber,
): Promise<{ json: string; complete: boolean }> {
  let complete = true;
  const linked: LinkedExceptionBody[] = [];
  for (const l of parsed.linked) {
    const mapped = await symbolicate(l.frames, release, p, (_, m) => isInApp(m.file));
    if (unavailable(mapped)) complete = false;
    const body: LinkedExceptionBody = {
      source: l.source,
      exception_type: l.exception_type,
      stack_frames: mapped,
      unparsed_line_count: l.unparsed_line_count,
    };
    if (l.parent !== undefined) body.parent = l.parent;
    if (l.message !== undefined) body.message = l.message;
    linked.push(scrubBySchema(body, linkedExceptionSchema, s));
  }
  let json = `"unparsed_line_count":${parsed.unparsed_line_count},`;
  if (parsed.unparsed_lines.length > 0)
    json += `"unparsed_lines":${JSON.stringify(parsed.unparsed_lines.map((l) => s.text(l)))},`;
  if (linked.length > 0) json += `"linked_exceptions":${JSON.stringify(linked)},`;
  return { json, complete };
}

/**
 * A stack made ready to store, through every stage: parse (docs/api.md "Capture fields and capture rules", 1 and 2: given
 * frames win, else the stack text is parsed), symbolicate, scrub, group keys, encode. `complete` is
 * false when a frame's map could not be read: such a stack is not kept, a later attempt may read it.
 */
async function makeStack(
  input: ErrorEventInput,
  given: RawFrame[] | undefined,
  frameLines: string | undefined,
  p: PipelineInput,
  encoder: StackEncoder,
  s: Scrubber,
): Promise<{ stack: ReadyStack; complete: boolean }> {
  const parsed: ParsedStack | undefined = given ? undefined : parseStackBody(frameLines ?? '');
  const mapped = await symbolicate(given ?? parsed!.frames, input.release, p, (r, m) => r.in_app ?? isInApp(m.file));
  let complete = !unavailable(mapped);
  const frames = mapped.map((f) => scrubBySchema(f, frameSchema, s));
  const scrubbedLines = frameLines === undefined ? undefined : s.text(frameLines);
  let extra = '';
  if (parsed && frameLines !== undefined) {
    const linked = await linkedMembers(parsed, input.release, p, s);
    complete &&= linked.complete;
    extra = linked.json;
  }
  const keyFrames: KeyFrame[] = frames.map(({ function: fn, file, in_app, unmapped_reason }) => ({
    function: fn,
    file,
    in_app,
    unmapped_reason,
  }));
  const stack: ReadyStack = {
    frames: keyFrames,
    keys: stackKeys(keyFrames, parsed !== undefined),
    segment: encoder.framesSegment(
      frames.map((f) => JSON.stringify(f)),
      scrubbedLines,
      extra,
    ),
  };
  if (scrubbedLines !== undefined) stack.frameLines = scrubbedLines;
  return { stack, complete };
}

/** The stack of an event: the worker's kept one when it recurs, else made and kept. */
async function stackOf(
  input: ErrorEventInput,
  frameLines: string | undefined,
  p: PipelineInput,
  s: Scrubber,
): Promise<ReadyStack> {
  const given = input.stack_frames && input.stack_frames.length > 0 ? input.stack_frames : undefined;
  const { stacks, encoder } = p.caches;
  const mapping = `${p.policy.id}:${input.release === undefined ? 0 : 1}${stacks.mappingOf(p.maps)}`;
  // Given frames are keyed by a digest (their JSON would be kilobytes of key); frame lines as they are.
  const key = given
    ? `f${createHash('sha256')
        .update(JSON.stringify([mapping, given, frameLines ?? null]))
        .digest('base64')}`
    : `${frameLines === undefined ? 'n' : 's'}${mapping}\n${frameLines ?? ''}`;
  const kept = stacks.get(key);
  if (kept) {
    s.absorb(kept.counts);
    return kept.stack;
  }
  // Scrubbed on a scrubber of its own, so what it counts is the stack's, for every event that reuses it.
  const own = p.policy.scrubber();
  const { stack, complete } = await makeStack(input, given, frameLines, p, encoder, own);
  const counts = own.counts();
  s.absorb(counts);
  if (complete) stacks.set(key, stack, counts);
  return stack;
}

/**
 * A Sentry event's causes as linked exceptions (the form a stack's printed `[cause]` takes):
 * outermost first, each frame mapped like the outer exception's, each hung on its parent by the
 * `mechanism` ids the SDK gave (a plain chain without them). Per event, not part of the kept stack:
 * two events with the same stack may have different causes. Scrubbed with the rest of the head.
 */
async function sentryLinked(
  causes: readonly SentryCause[],
  outerId: number | undefined,
  release: string | undefined,
  p: PipelineInput,
): Promise<LinkedExceptionBody[]> {
  const list = [...causes].reverse();
  const at = new Map(list.flatMap((c, i) => (c.exception_id === undefined ? [] : [[c.exception_id, i] as const])));
  const out: LinkedExceptionBody[] = [];
  for (const [i, c] of list.entries()) {
    const body: LinkedExceptionBody = {
      source: c.source && /^errors\[\d+\]$/.test(c.source) ? c.source : 'cause',
      exception_type: c.exception_type,
      stack_frames: await symbolicate(c.stack_frames, release, p, (r, m) => r.in_app ?? isInApp(m.file)),
      unparsed_line_count: 0,
    };
    const parent =
      c.parent_id === undefined
        ? i === 0
          ? undefined
          : i - 1
        : c.parent_id === outerId
          ? undefined
          : at.get(c.parent_id);
    if (parent !== undefined && parent !== i) body.parent = parent;
    if (c.message !== undefined) body.message = c.message;
    out.push(body);
  }
  return out;
}

export async function processEvent(input: ErrorEventInput, p: PipelineInput): Promise<ProcessedEvent> {
  const s = p.policy.scrubber();
  // Parse: the stack text's message lines are the event's own, its frame lines the stack's.
  const split = input.stack !== undefined ? splitStack(input.stack, input) : undefined;
  const stack = await stackOf(input, split?.frames, p, s);
  // Scrub: every string of the event is scrubbed unless its schema marks it safe (scrubbing/schema.ts).
  const raw: Record<string, unknown> = {
    event_time: new Date(input.event_time).toISOString(),
    exception_type: input.exception_type,
    breadcrumbs: input.breadcrumbs ?? [],
    tags: input.tags ?? {},
    scrub_counts: {},
  };
  if (input.message !== undefined) raw.message = input.message;
  if (input.fingerprint !== undefined) raw.fingerprint = input.fingerprint;
  if (input.service_name !== undefined) raw.service_name = input.service_name;
  if (input.release !== undefined) raw.release = input.release;
  if (input.trace_id !== undefined) raw.trace_id = input.trace_id;
  if (input.span_id !== undefined) raw.span_id = input.span_id;
  const sentry = (input as Partial<SentryEventInput>).sentry;
  if (sentry !== undefined) {
    const { causes, outer_id, ...rest } = sentry;
    raw.sentry = rest;
    if (causes && causes.length > 0) raw.linked_exceptions = await sentryLinked(causes, outer_id, input.release, p);
  }
  const linked = raw.linked_exceptions as LinkedExceptionBody[] | undefined;
  const mapUnavailable = linked?.some((l) => unavailable(l.stack_frames)) ?? false;
  const head = scrubBySchema(raw, eventHeadSchema, s) as ProcessedEvent['head'];
  cutBreadcrumbData(head.breadcrumbs);
  const messageLines = split ? s.text(split.message) : undefined;
  head.scrub_counts = s.counts();
  // Group.
  const key = groupKey(
    { exception_type: head.exception_type, message: head.message, fingerprint: head.fingerprint, frames: stack.frames },
    stack.keys,
  );
  // A Sentry message event (captureMessage) is titled by its message alone, as Sentry titles it.
  const title = (
    sentry?.kind === 'message' && head.message
      ? head.message
      : head.message
        ? `${head.exception_type}: ${head.message}`
        : head.exception_type
  ).slice(0, 1024);
  // Encode.
  const stored = packBody(stack.segment, messageLines, head);
  if (messageLines !== undefined) head.stack = messageLines + (stack.frameLines ?? '');
  return { ...key, title, head, frames: stack.frames, stored, ...(mapUnavailable ? { mapUnavailable } : {}) };
}

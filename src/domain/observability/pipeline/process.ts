// One accepted event through the pipeline: parse → symbolicate → scrub → group. Pure but
// for map loading; the worker stores the result. Scrubbing comes before grouping and storage, so
// no secret reaches a key, a title or a row.
import { createHash } from 'node:crypto';
import { framesSegment, packBody } from './event-body.ts';
import type { ErrorEventInput } from '../intake/event-schema.ts';
import { groupKey, stackKeys, type Grouping, type StackKeys } from './fingerprint.ts';
import { isInApp } from './paths.ts';
import type { Scrubber, ScrubCounts } from '../scrubbing/scrub.ts';
import { eventHeadSchema, frameSchema, linkedExceptionSchema, scrubBySchema } from '../scrubbing/schema.ts';
import { parseStackBody, splitStack, type ParsedStack } from './stack/index.ts';
import { symbolicateFrame, type MapLoader, type MapRef, type RawFrame, type StackFrame } from './symbolicate.ts';

export interface Breadcrumb {
  timestamp?: string;
  type?: string;
  category?: string;
  level?: string;
  message?: string;
  data?: Record<string, string | number | boolean | null>;
}

/** What an ErrorEvent reads back as, beside its name, uid, meta and group. */
export interface EventBody {
  event_time: string;
  exception_type: string;
  message?: string;
  stack?: string;
  stack_frames: StackFrame[];
  service_name?: string;
  release?: string;
  breadcrumbs: Breadcrumb[];
  tags: Record<string, string>;
  fingerprint?: string;
  trace_id?: string;
  span_id?: string;
  /** Errors printed inside the stack's own properties (`[cause]`, `[errors]`), outermost first. */
  linked_exceptions?: LinkedExceptionBody[];
  /** Lines of `stack` no format reads (when the stack was parsed), and the first of them. */
  unparsed_line_count?: number;
  unparsed_lines?: string[];
  /** How many values each scrubbing rule replaced. */
  scrub_counts: ScrubCounts;
}

/** A linked error as stored: its frames mapped and scrubbed like the outer exception's. */
export interface LinkedExceptionBody {
  source: string;
  parent?: number;
  exception_type: string;
  message?: string;
  stack_frames: StackFrame[];
  unparsed_line_count: number;
}

/** What grouping and the worker look at in a processed frame. */
export type KeyFrame = Pick<StackFrame, 'function' | 'file' | 'in_app' | 'unmapped_reason'>;

export interface ProcessedEvent {
  fingerprint: string;
  grouping: Grouping;
  culprit: string;
  title: string;
  /** The body but its frames, which are in `stored` only. */
  head: Omit<EventBody, 'stack_frames'>;
  frames: KeyFrame[];
  /** The whole body as it is stored: deflated JSON (event-body.ts). */
  stored: Buffer;
}

/** A stack's frames ready to store: grouping's view, and the body's first deflated segment. */
interface ReadyStack {
  frames: KeyFrame[];
  keys: StackKeys;
  segment: Buffer;
  /** The stack text's frame lines, scrubbed (when the event has a stack). */
  frameLines?: string;
}

/** A frame ready to store, as JSON and as grouping sees it. */
interface ReadyFrame {
  key: KeyFrame;
  json: string;
}

const scrubFrame = (f: StackFrame, s: Scrubber): StackFrame => scrubBySchema(f, frameSchema, s);

/**
 * What a parsed stack holds beside the outer exception's frames, as the JSON members the stored
 * body gets: its linked errors (frames mapped and scrubbed, never grouped: the outer exception
 * stays the one grouped, as Sentry groups a chained exception by its outermost) and its unparsed lines.
 */
async function readyLinked(
  parsed: ParsedStack,
  release: string | undefined,
  maps: readonly MapRef[],
  load: MapLoader,
  s: Scrubber,
): Promise<{ json: string; unavailable: boolean }> {
  let unavailable = false;
  const linked: LinkedExceptionBody[] = [];
  for (const l of parsed.linked) {
    const frames: StackFrame[] = [];
    for (const r of l.frames) {
      const mapped = await symbolicateFrame(r, release, maps, load);
      mapped.in_app = isInApp(mapped.file);
      if (r.eval_origin !== undefined) mapped.eval_origin = r.eval_origin;
      if (mapped.unmapped_reason === 'map_unavailable') unavailable = true;
      frames.push(scrubFrame(mapped, s));
    }
    const body: LinkedExceptionBody = {
      source: l.source,
      exception_type: l.exception_type,
      stack_frames: [],
      unparsed_line_count: l.unparsed_line_count,
    };
    if (l.parent !== undefined) body.parent = l.parent;
    if (l.message !== undefined) body.message = l.message;
    // The frames are mapped and scrubbed above; the rest by the schema.
    linked.push({ ...scrubBySchema(body, linkedExceptionSchema, s), stack_frames: frames });
  }
  let json = `"unparsed_line_count":${parsed.unparsed_line_count},`;
  if (parsed.unparsed_lines.length > 0)
    json += `"unparsed_lines":${JSON.stringify(parsed.unparsed_lines.map((l) => s.text(l)))},`;
  if (linked.length > 0) json += `"linked_exceptions":${JSON.stringify(linked)},`;
  return { json, unavailable };
}

/** A frame mapped and scrubbed, as JSON and as grouping sees it. */
async function readyFrame(
  raw: RawFrame,
  release: string | undefined,
  maps: readonly MapRef[],
  load: MapLoader,
  s: Scrubber,
): Promise<ReadyFrame> {
  const mapped = await symbolicateFrame(raw, release, maps, load);
  mapped.in_app = raw.in_app ?? isInApp(mapped.file);
  if (raw.eval_origin !== undefined) mapped.eval_origin = raw.eval_origin;
  const frame = scrubFrame(mapped, s);
  const { function: fn, file, in_app, unmapped_reason } = frame;
  return { key: { function: fn, file, in_app, unmapped_reason }, json: JSON.stringify(frame) };
}

// What decides how a release's frames map: which maps it has, and for which files.
const mapsIdentity = new WeakMap<readonly MapRef[], string>();
const identityOf = (maps: readonly MapRef[]): string => {
  let id = mapsIdentity.get(maps);
  if (id === undefined) {
    id = JSON.stringify(maps.map((m) => [m.sha256, m.file, m.file_path, m.minified?.sha256 ?? null]));
    mapsIdentity.set(maps, id);
  }
  return id;
};

/**
 * All of a stack's frames, ready to store. The same stack recurs in event after event of one bug:
 * it is made once per policy, down to its deflated bytes, its grouping keys and its scrubbed frame
 * lines, so an event pays to parse, scrub and compress only what is its own (its message lines,
 * tags, breadcrumbs). Measured in bench/errors.ts: 0.29 ms of worker CPU per event against 0.73
 * when every frame was mapped, scrubbed and compressed for every event. A stack with a frame whose
 * map could not be read is not remembered: a later attempt may read it. Stacks, not frames, are
 * remembered: a frame memo as well held the worker's peak memory over its 300 MB bound
 * with 50 releases' maps, and the context-line memo of scrub.ts already serves frames that stacks share.
 */
async function readyStack(
  input: ErrorEventInput,
  frameLines: string | undefined,
  maps: readonly MapRef[],
  load: MapLoader,
  s: Scrubber,
): Promise<ReadyStack> {
  // SPEC.md capture rules 1 and 2: given frames win; else the stack is parsed.
  const given = input.stack_frames && input.stack_frames.length > 0 ? input.stack_frames : undefined;
  const mapping = `${input.release === undefined ? 0 : 1}${identityOf(maps)}`;
  // Given frames are keyed by a digest (their JSON would be kilobytes of key); frame lines as they are.
  const key = given
    ? `f${createHash('sha256')
        .update(JSON.stringify([mapping, given, frameLines ?? null]))
        .digest('base64')}`
    : `${frameLines === undefined ? 'n' : 's'}${mapping}\n${frameLines ?? ''}`;
  const hit = s.recall<ReadyStack>(key);
  if (hit) return hit;
  let unavailable = false;
  const make = async (): Promise<ReadyStack> => {
    const parsed: ParsedStack | undefined = given ? undefined : parseStackBody(frameLines ?? '');
    const raw: RawFrame[] = given ?? parsed!.frames;
    const ready: ReadyFrame[] = [];
    for (const r of raw) ready.push(await readyFrame(r, input.release, maps, load, s));
    unavailable = ready.some((r) => r.key.unmapped_reason === 'map_unavailable');
    const frames = ready.map((r) => r.key);
    const scrubbedLines = frameLines === undefined ? undefined : s.text(frameLines);
    let extra = '';
    if (parsed && frameLines !== undefined) {
      const linked = await readyLinked(parsed, input.release, maps, load, s);
      if (linked.unavailable) unavailable = true;
      extra = linked.json;
    }
    const stack: ReadyStack = {
      frames,
      keys: stackKeys(frames),
      segment: framesSegment(
        ready.map((r) => r.json),
        scrubbedLines,
        extra,
      ),
    };
    if (scrubbedLines !== undefined) stack.frameLines = scrubbedLines;
    return stack;
  };
  // Strings count once a byte; a frame's small object and the entry itself about 160 bytes.
  const stack = await s.remember(
    key,
    make,
    (v) =>
      v.segment.length +
      key.length +
      (v.frameLines?.length ?? 0) +
      v.keys.inAppJson.length +
      v.keys.allJson.length +
      160 * (v.frames.length + 1),
  );
  if (unavailable) s.forget(key);
  return stack;
}

export async function processEvent(
  input: ErrorEventInput,
  maps: readonly MapRef[],
  load: MapLoader,
  scrubber: Scrubber,
): Promise<ProcessedEvent> {
  const s = scrubber;
  // The stack's frame lines are scrubbed with the stack (once per stack), its message lines here.
  const split = input.stack !== undefined ? splitStack(input.stack, input) : undefined;
  const stack = await readyStack(input, split?.frames, maps, load, s);
  // Every string of the event is scrubbed unless its schema marks it safe (scrubbing/schema.ts).
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
  const body = scrubBySchema(raw, eventHeadSchema, s) as ProcessedEvent['head'];
  const messageLines = split ? s.text(split.message) : undefined;
  body.scrub_counts = s.counts();
  const key = groupKey(
    { exception_type: body.exception_type, message: body.message, fingerprint: body.fingerprint, frames: stack.frames },
    stack.keys,
  );
  const title = (body.message ? `${body.exception_type}: ${body.message}` : body.exception_type).slice(0, 1024);
  const stored = packBody(stack.segment, messageLines, body);
  if (messageLines !== undefined) body.stack = messageLines + (stack.frameLines ?? '');
  return { ...key, title, head: body, frames: stack.frames, stored };
}

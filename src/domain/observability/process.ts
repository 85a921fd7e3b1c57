// One accepted event through the pipeline (issue 3): parse → symbolicate → scrub → group. Pure but
// for map loading; the worker stores the result. Scrubbing comes before grouping and storage, so
// no secret reaches a key, a title or a row.
import type { ErrorEventInput } from './event-schema.ts';
import { groupKey, type Grouping } from './fingerprint.ts';
import { isInApp } from './paths.ts';
import type { Scrubber, ScrubCounts } from './scrub.ts';
import { parseStack } from './stack-parser.ts';
import { symbolicate, type MapLoader, type MapRef, type RawFrame, type StackFrame } from './symbolicate.ts';

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
  /** How many values each scrubbing rule replaced. */
  scrub_counts: ScrubCounts;
}

export interface ProcessedEvent {
  fingerprint: string;
  grouping: Grouping;
  culprit: string;
  title: string;
  body: EventBody;
}

function scrubFrame(f: StackFrame, s: Scrubber): StackFrame {
  // Built key by key rather than spread and then pruned: `delete` turns an object into a slow
  // dictionary-mode one (undefined values are left out of the stored JSON anyway).
  const out = { ...f };
  if (f.function !== undefined) out.function = s.recurring(f.function);
  if (f.file !== undefined) out.file = s.recurring(f.file);
  if (f.pre_context) out.pre_context = f.pre_context.map(s.recurring);
  if (f.context_line !== undefined) out.context_line = s.recurring(f.context_line);
  if (f.post_context) out.post_context = f.post_context.map(s.recurring);
  if (f.generated) {
    const g = { ...f.generated };
    if (g.function !== undefined) g.function = s.recurring(g.function);
    if (g.file !== undefined) g.file = s.recurring(g.file);
    out.generated = g;
  }
  return out;
}

function scrubBreadcrumb(b: Breadcrumb, s: Scrubber): Breadcrumb {
  const out: Breadcrumb = { ...b };
  if (b.message !== undefined) out.message = s.text(b.message);
  if (b.category !== undefined) out.category = s.text(b.category);
  if (b.data) {
    out.data = Object.fromEntries(Object.entries(b.data).map(([k, v]) => [k, typeof v === 'string' ? s.keyed(k, v) : v]));
  }
  return out;
}

export async function processEvent(input: ErrorEventInput, maps: readonly MapRef[], load: MapLoader, scrubber: Scrubber): Promise<ProcessedEvent> {
  // SPEC.md capture rules 1 and 2: given frames win; else the stack is parsed.
  const raw: RawFrame[] = input.stack_frames && input.stack_frames.length > 0 ? input.stack_frames : parseStack(input.stack ?? '');
  const mapped = await symbolicate(raw, input.release, maps, load);
  mapped.forEach((f, i) => {
    f.in_app = raw[i]?.in_app ?? isInApp(f.file);
  });
  const s = scrubber;
  const frames = mapped.map((f) => scrubFrame(f, s));
  const body: EventBody = {
    event_time: new Date(input.event_time).toISOString(),
    exception_type: s.text(input.exception_type),
    stack_frames: frames,
    breadcrumbs: (input.breadcrumbs ?? []).map((b) => scrubBreadcrumb(b, s)),
    tags: Object.fromEntries(Object.entries(input.tags ?? {}).map(([k, v]) => [k, s.keyed(k, v)])),
    scrub_counts: {},
  };
  if (input.message !== undefined) body.message = s.text(input.message);
  if (input.stack !== undefined) body.stack = s.text(input.stack);
  if (input.fingerprint !== undefined) body.fingerprint = s.text(input.fingerprint);
  if (input.service_name !== undefined) body.service_name = input.service_name;
  if (input.release !== undefined) body.release = input.release;
  if (input.trace_id !== undefined) body.trace_id = input.trace_id;
  if (input.span_id !== undefined) body.span_id = input.span_id;
  body.scrub_counts = s.counts();
  const key = groupKey({ exception_type: body.exception_type, message: body.message, fingerprint: body.fingerprint, frames });
  const title = (body.message ? `${body.exception_type}: ${body.message}` : body.exception_type).slice(0, 1024);
  return { ...key, title, body };
}

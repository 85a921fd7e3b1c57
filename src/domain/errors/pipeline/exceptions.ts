// Step 2 of the pipeline, for every exception alike (the outer one's frames, the errors linked to
// it: printed in its stack or sent by its client): each frame through the release's maps, marked
// in-app as its client said, else by its mapped file (paths.ts).
import type { LinkedExceptionBody } from '../../../contract/error-event.ts';
import { isInApp } from './paths.ts';
import { symbolicateFrame, type MapLoader, type MapRef, type RawFrame, type StackFrame } from './symbolicate.ts';

/** The maps an event's frames go through. */
export interface MapsOf {
  maps: readonly MapRef[];
  load: MapLoader;
}

export async function symbolicateFrames(
  raw: readonly RawFrame[],
  release: string | undefined,
  m: MapsOf,
): Promise<StackFrame[]> {
  const out: StackFrame[] = [];
  for (const r of raw) {
    const mapped = await symbolicateFrame(r, release, m.maps, m.load);
    mapped.in_app = r.in_app ?? isInApp(mapped.file);
    if (r.eval_origin !== undefined) mapped.eval_origin = r.eval_origin;
    out.push(mapped);
  }
  return out;
}

/** A linked error before symbolication: parsed from a stack (stack/reader.ts), or its client's. */
export interface LinkedInput {
  source: string;
  parent?: number;
  exception_type: string;
  message?: string;
  frames: readonly RawFrame[];
  unparsed_line_count: number;
}

/** Linked errors as they are stored, their frames symbolicated. */
export async function symbolicateLinked(
  list: readonly LinkedInput[],
  release: string | undefined,
  m: MapsOf,
): Promise<LinkedExceptionBody[]> {
  const out: LinkedExceptionBody[] = [];
  for (const l of list) {
    const body: LinkedExceptionBody = {
      source: l.source,
      exception_type: l.exception_type,
      stack_frames: await symbolicateFrames(l.frames, release, m),
      unparsed_line_count: l.unparsed_line_count,
    };
    if (l.parent !== undefined) body.parent = l.parent;
    if (l.message !== undefined) body.message = l.message;
    out.push(body);
  }
  return out;
}

/** A frame's map could not be read: the event is tried again later, while attempts remain. */
export const mapUnavailable = (frames: readonly Pick<StackFrame, 'unmapped_reason'>[]): boolean =>
  frames.some((f) => f.unmapped_reason === 'map_unavailable');

// The stack's part of an event, through the pipeline's four steps once per stack: parse (given frames
// win, else the stack text's body is read: docs/api.md "Stacks"), symbolicate (exceptions.ts),
// scrub (by the event's schema, scrubbing/schema.ts), then group keys and encode (its deflated
// segment of the body, event-codec.ts). The result is kept per policy and mapping (stack-cache.ts),
// so an event whose stack recurs pays for none of it.
import { createHash } from 'node:crypto';
import type { CapturedFrame } from '../intake/captured-event.ts';
import type { Scrubber } from '../scrubbing/scrub.ts';
import { frameSchema, linkedExceptionSchema, scrubBySchema } from '../scrubbing/schema.ts';
import type { PipelineCaches } from './caches.ts';
import { mapUnavailable, symbolicateFrames, symbolicateLinked, type MapsOf } from './exceptions.ts';
import { stackKeys } from './fingerprint.ts';
import type { KeyFrame, ReadyStack } from './stack-cache.ts';
import { parseStackBody, type ParsedStack } from './stack/index.ts';
import type { CompiledPolicy } from '../scrubbing/scrub.ts';

/** What a stack is made with: the event's maps, its environment's policy, the worker's caches. */
export interface StackInput extends MapsOf {
  policy: CompiledPolicy;
  caches: Pick<PipelineCaches, 'stacks' | 'encoder'>;
}

/** The members of the stored body the stack text decides beside its frames, each `"name":value,`. */
function stackMembers(parsed: ParsedStack, linked: readonly unknown[], s: Scrubber): string {
  let json = `"unparsed_line_count":${parsed.unparsed_line_count},`;
  if (parsed.unparsed_lines.length > 0)
    json += `"unparsed_lines":${JSON.stringify(parsed.unparsed_lines.map((l) => s.text(l)))},`;
  if (linked.length > 0) json += `"linked_exceptions":${JSON.stringify(linked)},`;
  return json;
}

/**
 * A stack made ready to store. `complete` is false when a frame's map could not be read: such a
 * stack is not kept, a later attempt may read it.
 */
async function makeStack(
  given: readonly CapturedFrame[] | undefined,
  frameLines: string | undefined,
  release: string | undefined,
  p: StackInput,
  s: Scrubber,
): Promise<{ stack: ReadyStack; complete: boolean }> {
  // 1. Parse: the outer exception's frames, and the errors printed inside its own properties.
  const parsed = given ? undefined : parseStackBody(frameLines ?? '');
  const printed = parsed !== undefined && frameLines !== undefined;
  // 2. Symbolicate. Linked errors are mapped and stored, never grouped: the outer exception is the one grouped.
  const mapped = await symbolicateFrames(given ?? parsed!.frames, release, p);
  const mappedLinked = printed ? await symbolicateLinked(parsed.linked, release, p) : [];
  const complete = !mapUnavailable(mapped) && !mappedLinked.some((l) => mapUnavailable(l.stack_frames));
  // 3. Scrub.
  const frames = mapped.map((f) => scrubBySchema(f, frameSchema, s));
  const lines = frameLines === undefined ? undefined : s.text(frameLines);
  const linked = mappedLinked.map((l) => scrubBySchema(l, linkedExceptionSchema, s));
  const members = printed ? stackMembers(parsed, linked, s) : '';
  // 4. Group keys, and encode.
  const keyFrames: KeyFrame[] = frames.map(({ function: fn, file, in_app, unmapped_reason }) => ({
    function: fn,
    file,
    in_app,
    unmapped_reason,
  }));
  const segment = p.caches.encoder.framesSegment(
    frames.map((f) => JSON.stringify(f)),
    lines,
    members,
  );
  const stack: ReadyStack = { frames: keyFrames, keys: stackKeys(keyFrames, parsed !== undefined), segment };
  if (lines !== undefined) stack.frameLines = lines;
  return { stack, complete };
}

/** The stack of an event: the worker's kept one when it recurs, else made and kept. Counts what it scrubbed into `s`. */
export async function stackOf(
  given: readonly CapturedFrame[] | undefined,
  frameLines: string | undefined,
  release: string | undefined,
  p: StackInput,
  s: Scrubber,
): Promise<ReadyStack> {
  const { stacks } = p.caches;
  const mapping = `${p.policy.id}:${release === undefined ? 0 : 1}${stacks.mappingOf(p.maps)}`;
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
  const { stack, complete } = await makeStack(given, frameLines, release, p, own);
  const counts = own.counts();
  s.absorb(counts);
  if (complete) stacks.set(key, stack, counts);
  return stack;
}

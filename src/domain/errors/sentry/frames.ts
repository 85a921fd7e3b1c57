// A Sentry stack trace's frames as Cairn's
// (https://develop.sentry.dev/sdk/data-model/event-payloads/stacktrace/), with the code around each
// frame that the SDK read itself: `pre_context`, `context_line` and `post_context`. The Node SDK's
// ContextLines integration sends them for every frame whose file it can read, 5 lines each side in
// @sentry/node 11 and 7 (or `frameContextLines`) in sentry-javascript's
// packages/node-core/src/integrations/contextlines.ts, each line cut near 150 characters by
// `snipLine` (packages/core/src/utils/string.ts). The worker keeps them on a frame no source map
// maps, and scrubs them like the rest of the frame (contract/error-event.ts `storedFrame`); a frame a
// map maps gets the map's context instead, since the SDK's was read around the minified position
// (pipeline/symbolicate.ts).
import { clipContextLine } from '../pipeline/symbolicate.ts';
import { limits } from '../../../contract/error-capture.ts';
import type { CapturedFrame } from '../intake/captured-event.ts';
import { int, isObj, str, type Obj } from './lenient.ts';

/**
 * Lines kept each side of the frame's line: above the SDKs' defaults (5 to 7) and Cairn's own
 * source-map context (3). The lines nearest the frame's are the ones kept; each is clipped at 240
 * characters as a source map's line is, which keeps the SDKs' lines (cut near 150) whole.
 */
export const sdkContextLines = 10;

/**
 * Context lines as stored: at most `sdkContextLines`, each clipped like a source map's. A line
 * that is not a string (relay keeps a `null` in its place) becomes empty, so the lines keep their
 * positions around the frame's line. Undefined when there is none.
 */
function contextLines(v: unknown, nearestLast: boolean): string[] | undefined {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  const kept = nearestLast ? v.slice(-sdkContextLines) : v.slice(0, sdkContextLines);
  return kept.map((l) => (typeof l === 'string' ? clipContextLine(l) : ''));
}

/** The SDK's code context of a frame onto `frame`; nothing is read for a frame that has none. */
function addContext(frame: CapturedFrame, f: Obj): void {
  if (f.context_line === undefined && f.pre_context === undefined && f.post_context === undefined) return;
  const pre = contextLines(f.pre_context, true);
  if (pre) frame.pre_context = pre;
  if (typeof f.context_line === 'string') frame.context_line = clipContextLine(f.context_line);
  const post = contextLines(f.post_context, false);
  if (post) frame.post_context = post;
}

export function sentryFrames(stacktrace: unknown): CapturedFrame[] {
  const raw = isObj(stacktrace) && Array.isArray(stacktrace.frames) ? stacktrace.frames.filter(isObj) : [];
  // Relay's rule for long stacks: keep both ends, drop the middle (the crash site and the entry point).
  const half = limits.frames / 2;
  const kept = raw.length > limits.frames ? [...raw.slice(0, half), ...raw.slice(-half)] : raw;
  return kept.map((f) => {
    const frame: CapturedFrame = {};
    const fn = str(f.function, 1024);
    const file = str(f.abs_path, 2048) ?? str(f.filename, 2048) ?? str(f.module, 2048);
    const line = int(f.lineno);
    const column = int(f.colno);
    if (fn !== undefined) frame.function = fn;
    if (file !== undefined) frame.file = file;
    if (line !== undefined) frame.line = line;
    if (column !== undefined) frame.column = column;
    if (typeof f.in_app === 'boolean') frame.in_app = f.in_app;
    addContext(frame, f);
    return frame;
  });
}

// The group key (docs/api.md "Grouping rules"): the caller's fingerprint when set; else the
// exception type and the symbolicated in-app frames, by function and normalised file, never line
// or column and never release, so one bug stays one group across releases and rebuilds.
import { createHash } from 'node:crypto';
import { normalizeFile } from './paths.ts';
import type { StackFrame } from './symbolicate.ts';

type KeyFrame = Pick<StackFrame, 'function' | 'file' | 'in_app'>;

export interface GroupingFrame {
  function?: string;
  file?: string;
}

export interface Grouping {
  /** `fingerprint`: the caller's; `in_app_frames`; `all_frames` when none is in-app; `message` when there are no frames. */
  method: 'fingerprint' | 'in_app_frames' | 'all_frames' | 'message';
  /** The frames that made the key, innermost last. */
  frames: GroupingFrame[];
}

export interface GroupKey {
  fingerprint: string;
  grouping: Grouping;
  culprit: string;
}

const maxKeyFrames = 50;

const digest = (json: string): string => createHash('sha256').update(json).digest('hex').slice(0, 40);
const hash = (parts: unknown[]): string => digest(JSON.stringify(parts));

/** Numbers, hex ids and UUIDs vary between occurrences of one bug; the message key ignores them. */
export function normalizeMessage(message: string): string {
  return message
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/\b0x[0-9a-f]+\b|\b[0-9a-f]*\d[0-9a-f]{5,}\b/gi, '<hex>')
    .replace(/\d+/g, '<n>')
    .slice(0, 512);
}

/**
 * A name as a printed stack's frame was keyed before frames kept SpiderMonkey's closure paths:
 * without the trailing markers (`test/<` → `test`, `a</b._baz/</<` → `a</b._baz`, `<` → none).
 * Frames keep the name as printed (stack/gecko-line.ts); the key of a stack read from its text
 * drops the markers, so that the groups those stacks made keep their events. Frames an SDK or a
 * client sends were always keyed by their name as sent (Sentry's SDK sends `test/<`), and still are.
 */
export function closureOwner(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  let end = name.length;
  while (end > 0 && (name.charCodeAt(end - 1) === 60 || name.charCodeAt(end - 1) === 47)) end--;
  const n = name.slice(0, end).trim();
  return n === '' ? undefined : n;
}

function keyFrames(frames: readonly KeyFrame[], printed: boolean): GroupingFrame[] {
  const out: GroupingFrame[] = [];
  for (const f of frames) {
    const g: GroupingFrame = {
      function: printed ? closureOwner(f.function) : f.function,
      file: f.file === undefined ? undefined : normalizeFile(f.file),
    };
    const last = out.at(-1);
    // Recursion depth varies between occurrences: repeated frames count once.
    if (last && last.function === g.function && last.file === g.file) continue;
    out.push(g);
  }
  return out.slice(-maxKeyFrames);
}

export function culpritOf(frames: readonly KeyFrame[]): string {
  const top = frames.findLast((f) => f.in_app) ?? frames.at(-1);
  if (!top) return '';
  const file = top.file === undefined ? '' : normalizeFile(top.file);
  return top.function ? `${top.function}${file ? ` (${file})` : ''}` : file;
}

/** What grouping takes from a stack's frames; a stack recurs, so process.ts keeps it with the stack. */
export interface StackKeys {
  inApp: GroupingFrame[];
  all: GroupingFrame[];
  /** `inApp` and `all` as JSON, as the key's hash takes them. */
  inAppJson: string;
  allJson: string;
  culprit: string;
}

/** `printed`: the frames were read from a stack's text (process.ts), not given by the client. */
export function stackKeys(frames: readonly KeyFrame[], printed = false): StackKeys {
  const inApp = keyFrames(
    frames.filter((f) => f.in_app),
    printed,
  );
  const all = keyFrames(frames, printed);
  return { inApp, all, inAppJson: JSON.stringify(inApp), allJson: JSON.stringify(all), culprit: culpritOf(frames) };
}

// The same string JSON.stringify([method, type, frames]) makes, with the frames' JSON made once.
const framesHash = (method: string, type: string, framesJson: string): string =>
  digest(`[${JSON.stringify(method)},${JSON.stringify(type)},${framesJson}]`);

export function groupKey(
  event: { exception_type: string; message?: string; fingerprint?: string; frames: readonly KeyFrame[] },
  keys = stackKeys(event.frames),
): GroupKey {
  const { culprit } = keys;
  if (event.fingerprint) {
    return {
      fingerprint: hash(['fingerprint', event.fingerprint]),
      grouping: { method: 'fingerprint', frames: [] },
      culprit,
    };
  }
  if (keys.inApp.length > 0) {
    return {
      fingerprint: framesHash('in_app_frames', event.exception_type, keys.inAppJson),
      grouping: { method: 'in_app_frames', frames: keys.inApp },
      culprit,
    };
  }
  if (keys.all.length > 0) {
    return {
      fingerprint: framesHash('all_frames', event.exception_type, keys.allJson),
      grouping: { method: 'all_frames', frames: keys.all },
      culprit,
    };
  }
  return {
    fingerprint: hash(['message', event.exception_type, normalizeMessage(event.message ?? '')]),
    grouping: { method: 'message', frames: [] },
    culprit,
  };
}

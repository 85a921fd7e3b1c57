// The group key (SPEC.md grouping rules, issue 3): the caller's fingerprint when set; else the
// exception type and the symbolicated in-app frames, by function and normalised file, never line
// or column and never release, so one bug stays one group across releases and rebuilds.
import { createHash } from 'node:crypto';
import { normalizeFile } from './paths.ts';
import type { StackFrame } from './symbolicate.ts';

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

const hash = (parts: unknown[]): string => createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 40);

/** Numbers, hex ids and UUIDs vary between occurrences of one bug; the message key ignores them. */
export function normalizeMessage(message: string): string {
  return message
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/\b0x[0-9a-f]+\b|\b[0-9a-f]*\d[0-9a-f]{5,}\b/gi, '<hex>')
    .replace(/\d+/g, '<n>')
    .slice(0, 512);
}

function keyFrames(frames: readonly StackFrame[]): GroupingFrame[] {
  const out: GroupingFrame[] = [];
  for (const f of frames) {
    const g: GroupingFrame = { function: f.function, file: f.file === undefined ? undefined : normalizeFile(f.file) };
    const last = out.at(-1);
    // Recursion depth varies between occurrences: repeated frames count once.
    if (last && last.function === g.function && last.file === g.file) continue;
    out.push(g);
  }
  return out.slice(-maxKeyFrames);
}

export function culpritOf(frames: readonly StackFrame[]): string {
  const top = frames.findLast((f) => f.in_app) ?? frames.at(-1);
  if (!top) return '';
  const file = top.file === undefined ? '' : normalizeFile(top.file);
  return top.function ? `${top.function}${file ? ` (${file})` : ''}` : file;
}

export function groupKey(event: { exception_type: string; message?: string; fingerprint?: string; frames: readonly StackFrame[] }): GroupKey {
  const culprit = culpritOf(event.frames);
  if (event.fingerprint) {
    return { fingerprint: hash(['fingerprint', event.fingerprint]), grouping: { method: 'fingerprint', frames: [] }, culprit };
  }
  const inApp = keyFrames(event.frames.filter((f) => f.in_app));
  if (inApp.length > 0) {
    return { fingerprint: hash(['in_app_frames', event.exception_type, inApp]), grouping: { method: 'in_app_frames', frames: inApp }, culprit };
  }
  const all = keyFrames(event.frames);
  if (all.length > 0) {
    return { fingerprint: hash(['all_frames', event.exception_type, all]), grouping: { method: 'all_frames', frames: all }, culprit };
  }
  return {
    fingerprint: hash(['message', event.exception_type, normalizeMessage(event.message ?? '')]),
    grouping: { method: 'message', frames: [] },
    culprit,
  };
}

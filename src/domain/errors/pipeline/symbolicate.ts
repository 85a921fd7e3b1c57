// Maps frames through the source maps uploaded for the event's release (docs/api.md "Capture fields and capture rules", rule 3):
// original file, line and column, the original name of the enclosing function, and context lines
// from `sourcesContent`. A frame that stays as printed says why, and keeps the context lines its
// SDK sent (sentry/frames.ts); a mapped frame never does, since they are the minified file's lines
// around the generated position: the map's context replaces them, as Sentry's does, or there is
// none when the map has no sources.
import type { StoredFrame as StackFrame, UnmappedReason } from '../../../contract/error-event.ts';
import { enclosingFunction } from '../source-maps/scopes.ts';
import { lineOf } from '../source-maps/compact-map.ts';
import type { MapEntry } from '../source-maps/cache.ts';
import { filePath } from './paths.ts';
import { nameFromMinified } from '../source-maps/scope-naming.ts';

/** A frame as stored (contract/error-event.ts), and why one stays as printed. */
export type { StackFrame, UnmappedReason };

export interface RawFrame {
  function?: string;
  file?: string;
  line?: number;
  column?: number;
  in_app?: boolean;
  eval_origin?: string;
  /** The code around the frame as its SDK read it (sentry/frames.ts), kept while the frame is not mapped. */
  pre_context?: string[];
  context_line?: string;
  post_context?: string[];
}

export interface MapRef {
  file: string;
  file_path: string;
  sha256: string;
  size_bytes: number;
  object_key: string;
  /** The minified file uploaded for the same file, if any: names frames the map names nothing for. */
  minified?: { sha256: string; object_key: string; size_bytes: number };
}

/** Loads (through the cache) the map a MapRef points to; rejects when the store fails. */
export type MapLoader = (ref: MapRef) => Promise<MapEntry>;

const contextLines = 3;
const maxContextLine = 240;

/** A context line cut to 240 characters and marked as cut; a source map's or an SDK's. */
export const clipContextLine = (line: string): string =>
  line.length > maxContextLine ? `${line.slice(0, maxContextLine)}…` : line;

/** The upload for a frame's file: the same `file`, else the same path (docs/api.md). */
export function findMap(maps: readonly MapRef[], file: string): MapRef | undefined {
  const exact = maps.find((m) => m.file === file);
  if (exact) return exact;
  const path = filePath(file);
  return maps.find((m) => m.file_path === path);
}

async function mapFrame(
  frame: RawFrame,
  maps: readonly MapRef[],
  load: MapLoader,
): Promise<StackFrame | UnmappedReason> {
  if (!frame.file || frame.line === undefined) return 'no_position';
  const ref = findMap(maps, frame.file);
  if (!ref) return 'no_map_for_file';
  let entry: MapEntry;
  try {
    entry = await load(ref);
  } catch {
    return 'map_unavailable';
  }
  if (entry === 'malformed') return 'malformed_map';
  // Runtimes print 1-based columns; source maps count from 0 (ECMA-426 §4).
  const pos = entry.originalPositionFor(frame.line, Math.max(0, (frame.column ?? 1) - 1));
  if (pos === null) return 'position_outside_map';
  const source = entry.original(pos.source);
  const out: StackFrame = {
    file: pos.source,
    line: pos.line,
    column: pos.column + 1,
    in_app: false,
    generated: { function: frame.function, file: frame.file, line: frame.line, column: frame.column },
  };
  const enclosing = source
    ? enclosingFunction(source.scopes, (source.lineStarts[pos.line - 1] ?? 0) + pos.column)
    : undefined;
  // Without the original source, the function around the position comes from the minified file.
  const minified = !source && ref.minified ? await entry.minified.get(ref.minified.sha256) : undefined;
  const scoped = minified
    ? nameFromMinified(minified, entry, frame.line, Math.max(0, (frame.column ?? 1) - 1))
    : undefined;
  out.function = enclosing ?? scoped ?? pos.name ?? frame.function;
  if (source) {
    const i = pos.line - 1;
    const lines = (from: number, to: number) => {
      const out: string[] = [];
      for (let k = Math.max(0, from); k < to; k++) {
        const line = lineOf(source, k);
        if (line !== undefined) out.push(clipContextLine(line));
      }
      return out;
    };
    out.pre_context = lines(i - contextLines, i);
    const line = lineOf(source, i);
    if (line !== undefined) out.context_line = clipContextLine(line);
    out.post_context = lines(i + 1, i + 1 + contextLines);
  }
  return out;
}

/** One frame through the event's maps (its debug ids', then its release's); unmapped, it says why. */
export async function symbolicateFrame(
  frame: RawFrame,
  release: string | undefined,
  maps: readonly MapRef[],
  load: MapLoader,
): Promise<StackFrame> {
  const base: StackFrame = { ...frame, in_app: false };
  // Maps found by debug id serve an event whatever its release, and with none.
  if (maps.length === 0) return { ...base, unmapped_reason: release ? 'no_maps_for_release' : 'no_release' };
  const mapped = await mapFrame(frame, maps, load);
  return typeof mapped === 'string' ? { ...base, unmapped_reason: mapped } : mapped;
}

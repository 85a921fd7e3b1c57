// Debug ids (https://github.com/tc39/ecma426/blob/main/proposals/debug-id.md): a UUID a build
// writes into both its minified file and its source map, so that a frame finds its map by the id
// the runtime reports, whatever URL the file was served from. Sentry's SDKs report them in an
// event's `debug_meta.images`; sentry-cli and Sentry's bundler plugins write them.
const debugId = /^([0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12})(?:-[0-9a-f]{1,8})?$/i;

/** A debug id as written anywhere (with or without dashes, any case, an age suffix), or null. */
export function parseDebugId(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const m = debugId.exec(raw.trim());
  return m ? normalDebugId(m[1]!) : null;
}

/**
 * The debug id a map declares: `debugId` (the TC39 proposal's and sentry-cli's name) or
 * `debug_id` (older Sentry tools), a UUID; Sentry appends an age (`-0`) to some, which is dropped.
 */
export function debugIdOf(sourceMap: unknown): string | null {
  if (typeof sourceMap !== 'object' || sourceMap === null) return null;
  const m = sourceMap as { debugId?: unknown; debug_id?: unknown };
  return parseDebugId(m.debugId) ?? parseDebugId(m.debug_id);
}

/** A debug id as stored and compared: a lower-case UUID with its dashes. */
export function normalDebugId(id: string): string {
  const hex = id.replace(/-/g, '').toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

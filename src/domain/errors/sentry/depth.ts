// How deep a Sentry event may be, as relay decides it. Relay parses events with serde_json, whose
// recursion limit is 128 levels: a deeper payload is not an event at all (here 400, as any JSON
// that does not parse). Within an event, free-form data ("databags": `extra`, each of `contexts`,
// the fields of `request` and `user`) is cut at relay's databag depth (its TrimmingProcessor with
// the `large` bag size, 7 levels): an object or array that reaches the last level is replaced by
// its JSON text, so nothing below it is walked again (the scrubber, the stored event's readers).
// The SDKs cut deeper values themselves before sending (sentry-javascript's normalizeDepth, 3 by
// default), so only a hand-made or tunnelled event meets either rule.
import { AppError } from '../../../app-error.ts';
import { jsonShape } from '../../../json-shape.ts';

/** serde_json's default recursion limit, under which relay reads every event. */
export const maxEventDepth = 128;

/** Relay's `BagSize::Large` max_depth: the bag itself is level 0, its last level is 6. */
export const databagDepth = 7;

/**
 * Levels of the event's text (the event object being 1) from which a databag may need trimming:
 * `extra` is level 2 and its level 6 is level 8.
 */
const trimFrom = 8;

/** Refuses a payload nested past `maxEventDepth`; answers whether its databags may need `trimDatabag`. */
export function checkEventDepth(payload: Uint8Array, what: string): { trim: boolean } {
  // An event is at most 1 MiB, so its objects and arrays are not counted here (the item limit bounds them).
  const shape = jsonShape(payload, { depth: maxEventDepth, containers: Number.MAX_SAFE_INTEGER });
  if (shape.over)
    throw new AppError('invalid_request', `the ${what} is nested deeper than ${maxEventDepth} levels`, {
      details: { reason: 'too_deep', max_depth: maxEventDepth },
    });
  return { trim: shape.depth >= trimFrom };
}

/**
 * `value` with every object or array `levels - 1` below it replaced by its JSON text (relay's
 * databag rule), changed in place. The recursion is at most `levels` deep, and JSON.stringify
 * meets at most `maxEventDepth` levels.
 */
export function trimDatabag(value: unknown, levels = databagDepth): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (levels <= 1) return JSON.stringify(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = trimDatabag(value[i], levels - 1);
    return value;
  }
  const obj = value as Record<string, unknown>;
  for (const k of Object.keys(obj)) obj[k] = trimDatabag(obj[k], levels - 1);
  return obj;
}

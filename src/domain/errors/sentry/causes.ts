// A Sentry event's exception chain as the capture's linked exceptions, the form a stack's printed
// `[cause]` and `[errors]` take (https://develop.sentry.dev/sdk/data-model/event-payloads/exception/):
// `exception.values` lists the causes first and the outer exception last; each hangs on its parent
// by the `mechanism` ids the SDK gave (`exception_id`, `parent_id`), or, without them, on the one
// after it (a plain chain). The pipeline maps and scrubs them like any exception, and groups by the
// outer one alone, as Sentry groups a chained exception by its outermost.
import { limits } from '../../../contract/error-capture.ts';
import type { SentryParts } from '../../../contract/error-event.ts';
import type { CapturedEvent, CapturedFrame, CapturedLinked } from '../intake/captured-event.ts';
import { sentryFrames } from './frames.ts';
import { isObj, str, type Obj } from './lenient.ts';

/** Causes kept, nearest the outer exception first: the rest of a longer chain is dropped. */
const maxCauses = 64;

/** A cause as read, before it is linked: `source`, `exception_id` and `parent_id` are its `mechanism`'s. */
interface Cause {
  exception_type: string;
  message?: string;
  stack_frames: CapturedFrame[];
  source?: string;
  exception_id?: number;
  parent_id?: number;
}

function causeOf(v: Obj): Cause {
  const cause: Cause = { exception_type: str(v.type, 256) ?? 'Error', stack_frames: sentryFrames(v.stacktrace) };
  const m = str(v.value, limits.message);
  if (m !== undefined) cause.message = m;
  const mechanism = isObj(v.mechanism) ? v.mechanism : {};
  const source = str(mechanism.source, 64);
  if (source !== undefined) cause.source = source;
  if (Number.isSafeInteger(mechanism.exception_id)) cause.exception_id = mechanism.exception_id as number;
  if (Number.isSafeInteger(mechanism.parent_id)) cause.parent_id = mechanism.parent_id as number;
  return cause;
}

/** Causes (cause first) as linked exceptions, outermost first, each `parent` an index into the list. */
function link(causes: readonly Cause[], outerId: unknown): CapturedLinked[] {
  const list = [...causes].reverse();
  const at = new Map(list.flatMap((c, i) => (c.exception_id === undefined ? [] : [[c.exception_id, i] as const])));
  return list.map((c, i) => {
    const linked: CapturedLinked = {
      source: c.source && /^errors\[\d+\]$/.test(c.source) ? c.source : 'cause',
      exception_type: c.exception_type,
      stack_frames: c.stack_frames,
    };
    const parent =
      c.parent_id === undefined
        ? i === 0
          ? undefined
          : i - 1
        : Number.isSafeInteger(outerId) && c.parent_id === outerId
          ? undefined
          : at.get(c.parent_id);
    if (parent !== undefined && parent !== i) linked.parent = parent;
    if (c.message !== undefined) linked.message = c.message;
    return linked;
  });
}

/** The causes of `outer` (the earlier `values`, Sentry's order: cause first) as linked exceptions. */
export function linkedCauses(values: readonly Obj[], outer: Obj): CapturedLinked[] {
  const outerId = isObj(outer.mechanism) ? outer.mechanism.exception_id : undefined;
  return link(values.slice(-(maxCauses + 1), -1).map(causeOf), outerId);
}

/**
 * An event queued before a Sentry event's causes were mapped to linked exceptions held them in
 * `sentry.causes` (read, not linked) with the outer exception's id in `sentry.outer_id`: it is read
 * as it is queued now, so a job sealed before an upgrade stores the same event.
 */
export function readQueuedCauses(event: CapturedEvent): CapturedEvent {
  const sentry = event.sentry as (SentryParts & { causes?: Cause[]; outer_id?: number }) | undefined;
  if (sentry?.causes === undefined) return event;
  const { causes, outer_id, ...rest } = sentry;
  const out: CapturedEvent = { ...event, sentry: rest };
  if (causes.length > 0) out.linked_exceptions = link(causes, outer_id);
  return out;
}

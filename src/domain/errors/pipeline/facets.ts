// What a stored event gives its group's facets (the migration `create_error_group_facets` draws
// them): its tags, as Sentry shows an event's tags, and the user it names. Read from the stored
// event, after scrubbing, never from the capture: a value the policy replaced reaches these tables
// as it reaches the body (`[Filtered]`), and a secret never does.
//
// Tags are the client's, each (key, value) once, then two built-ins that give way to nothing, as
// Sentry's do: `release` (when the event has one) and `level`, the Sentry level the SDK sent, else
// `error`, the level relay gives an event that names none (a capture is an error). A tag whose key
// or value is empty or out of bounds is dropped rather than cut, as relay's `normalize_event_tags`
// drops it (relay-event-normalization): a cut value would match values it is not. The bounds are capture's own (contract/error-capture.ts:
// 64 tags, keys 32 and values 200 characters), so every tag a capture may carry is searchable;
// they guard what scrubbing lengthened (a replaced value) and events stored before them.
//
// The user is named by the first of id, email, username and IP address the event's `user` gave
// (Sentry's `user` tag: `id:42`, `email:…`, `username:…`, `ip:…`). A field the scrubber replaced
// whole (`[Filtered]`), relay's `{{auto}}` placeholder (an IP Sentry fills in from the request and
// Cairn does not), an empty one or one over 128 characters names no one and counts as absent: one
// scrubbed email must not make every user of a group one user.
import { limits } from '../../../contract/error-capture.ts';
import type { EventBody } from '../../../contract/error-event.ts';
import { filtered } from '../scrubbing/rules.ts';

export const facetLimits = { tags: limits.tags, key: 32, value: 200, user: 128 } as const;

/** The user an event names: `user_key` is what tells users apart; the rest is what it gave. */
export interface EventUser {
  user_key: string;
  user_id?: string;
  email?: string;
  username?: string;
}

export interface EventFacets {
  /** (key, value) pairs, each key once: the client's first, then `release` and `level`. */
  tags: [string, string][];
  user?: EventUser;
}

/** What facets are read from: the stored event (a processed head, or a body read back). */
export type FacetSource = Pick<EventBody, 'tags' | 'release' | 'sentry'>;

const builtIn = new Set(['release', 'level']);

function tagsOf(event: FacetSource): [string, string][] {
  const out: [string, string][] = [];
  for (const [key, value] of Object.entries(event.tags ?? {})) {
    if (out.length >= facetLimits.tags) break;
    if (builtIn.has(key) || typeof value !== 'string') continue;
    if (key.length === 0 || key.length > facetLimits.key || value.length === 0 || value.length > facetLimits.value)
      continue;
    out.push([key, value]);
  }
  if (event.release) out.push(['release', event.release]);
  out.push(['level', event.sentry?.level ?? 'error']);
  return out;
}

/** A user field that names someone, else undefined. Ids may be numbers (Sentry's SDKs send either). */
function field(v: unknown, numbers = false): string | undefined {
  const s = typeof v === 'string' ? v : numbers && typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;
  if (s === undefined || s.length === 0 || s.length > facetLimits.user) return undefined;
  return s === filtered || s === '{{auto}}' ? undefined : s;
}

function userOf(event: FacetSource): EventUser | undefined {
  const bag = event.sentry?.user;
  if (bag === undefined || bag === null || typeof bag !== 'object') return undefined;
  const id = field(bag.id, true);
  const email = field(bag.email);
  const username = field(bag.username);
  const ip = field(bag.ip_address);
  const user_key =
    id !== undefined
      ? `id:${id}`
      : email !== undefined
        ? `email:${email}`
        : username !== undefined
          ? `username:${username}`
          : ip !== undefined
            ? `ip:${ip}`
            : undefined;
  if (user_key === undefined) return undefined;
  const user: EventUser = { user_key };
  if (id !== undefined) user.user_id = id;
  if (email !== undefined) user.email = email;
  if (username !== undefined) user.username = username;
  return user;
}

export function facetsOf(event: FacetSource): EventFacets {
  const user = userOf(event);
  return user ? { tags: tagsOf(event), user } : { tags: tagsOf(event) };
}

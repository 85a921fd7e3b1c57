// Error groups as the API shows them (contract/errors.ts; their events: events/present.ts), the
// keysets their lists and their events' page by, and the error_group.* webhook events, whose data
// is the same resource.
import type { ErrorGroup, ErrorGroupSort } from '../../../contract/errors.ts';
import { byTimeAndId, type Keyset } from '../../../contract/pages.ts';
import type { WebhookEvent } from '../../webhooks/outbox/catalogue.ts';
import type { EventRow, GroupPosition, GroupRow } from './queries.ts';

/** A group's value in each order (search/queries.ts sortColumns), as a page token carries it. */
const sortValue: Record<ErrorGroupSort, (g: GroupRow) => string> = {
  last_seen: (g) => g.last_seen_time.toISOString(),
  first_seen: (g) => g.first_seen_time.toISOString(),
  events: (g) => String(g.occurrence_count),
  users: (g) => String(g.user_count),
};

const isPosition = (v: unknown): v is GroupPosition =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as GroupPosition).v === 'string' &&
  typeof (v as GroupPosition).id === 'string';

/**
 * Groups page by (sort value, id), newest or most first. The token is bound to the list it came
 * from: its sort and every filter (the search in its printed, canonical form), so a token of one
 * search or order is refused by another instead of being read as a position in it. `list` names
 * the surface (the API's `error_groups`, the console's own).
 */
export function groupPages(list: string, sort: ErrorGroupSort, filters: unknown): Keyset<GroupRow, GroupPosition> {
  return {
    purpose: `${list} ${JSON.stringify({ sort, filters })}`,
    positionOf: (g) => ({ v: sortValue[sort](g), id: g.id }),
    isPosition,
  };
}
export const eventPages = byTimeAndId<EventRow>('error_events', (e) => ({ t: e.event_time.toISOString(), id: e.uid }));

export function groupView(envName: string, g: GroupRow): ErrorGroup {
  return {
    name: `${envName}/error_groups/${g.id}`,
    uid: g.id,
    fingerprint: g.fingerprint,
    title: g.title,
    culprit: g.culprit,
    service_name: g.service_name,
    state: g.state,
    first_seen_time: g.first_seen_time.toISOString(),
    last_seen_time: g.last_seen_time.toISOString(),
    occurrence_count: Number(g.occurrence_count),
    user_count: Number(g.user_count ?? 0),
    last_release: g.last_release,
    etag: g.etag,
    ...(g.resolve_time ? { resolve_time: new Date(g.resolve_time).toISOString() } : {}),
    grouping: g.grouping as ErrorGroup['grouping'],
  };
}

type Env = { id: string; name: string };

export function errorGroupEvent(
  env: Env,
  type: 'error_group.created' | 'error_group.reopened' | 'error_group.resolved',
  g: GroupRow,
): WebhookEvent {
  return { envId: env.id, type, subject: g.id, data: groupView(env.name, g) };
}

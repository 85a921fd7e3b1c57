// Error groups as the API shows them (contract/errors.ts; their events: events/present.ts), the
// keysets their lists and their events' page by, and the error_group.* webhook events, whose data
// is the same resource.
import type { ErrorGroup } from '../../../contract/errors.ts';
import { byTimeAndId } from '../../../contract/pages.ts';
import type { WebhookEvent } from '../../webhooks/outbox/catalogue.ts';
import type { EventRow, GroupRow } from './queries.ts';

/** Groups page by (last_seen_time, id), newest first; events by (event_time, uid). */
export const groupPages = byTimeAndId<GroupRow>('error_groups', (g) => ({
  t: g.last_seen_time.toISOString(),
  id: g.id,
}));
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

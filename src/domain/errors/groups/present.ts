// Error groups and their events as the API shows them (contract/errors.ts), the keysets their lists
// page by, and the error_group.* webhook events, whose data is the same resource.
import type { ErrorEvent, ErrorGroup } from '../../../contract/errors.ts';
import { byTimeAndId } from '../../../contract/pages.ts';
import { sentryEventFields, type SentryEventFields } from '../../../contract/sentry-event.ts';
import type { WebhookEvent } from '../../webhooks/catalogue.ts';
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

const sentryNames = Object.keys(sentryEventFields) as (keyof SentryEventFields)[];

/**
 * The top-level members of an event's stored `sentry` object (contract/sentry-event.ts), none for
 * an event not from a Sentry SDK.
 */
function sentryEventView(sentry: Record<string, unknown> | undefined): SentryEventFields {
  const out: Record<string, unknown> = {};
  if (sentry) for (const k of sentryNames) if (sentry[k] !== undefined) out[k] = sentry[k];
  return out as SentryEventFields;
}

export function eventView(envName: string, e: EventRow): ErrorEvent {
  return {
    name: `${envName}/error_groups/${e.group_id}/error_events/${e.uid}`,
    uid: e.uid,
    meta: { create_time: e.create_time.toISOString(), receive_time: e.receive_time.toISOString() },
    ...e.body,
    ...sentryEventView(e.body.sentry),
    breadcrumbs: e.body.breadcrumbs as Record<string, unknown>[],
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

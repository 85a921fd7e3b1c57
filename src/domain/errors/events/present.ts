// An event row as the API's ErrorEvent (contract/error-event.ts `eventResource`): its stored body,
// named, with the members of a Sentry SDK's event also at the top level, under the names Sentry's
// own event JSON gives them (`level`, `server_name`, `user`, `request`, `contexts`…), beside the
// `sentry` object that has held them since Cairn first kept them (still answered, for the clients
// that read it). Both are views of the one stored, scrubbed `sentry` object, so events stored
// before those names were answered carry them too.
import type { z } from 'zod';
import { eventResource, sentryTopLevel, type SentryParts } from '../../../contract/error-event.ts';
import type { EventRow } from '../groups/queries.ts';

type TopLevel = { [K in keyof typeof sentryTopLevel]?: z.input<(typeof sentryTopLevel)[K]> };
const topLevel = Object.keys(sentryTopLevel) as (keyof TopLevel)[];

/** The top-level members of an event's stored `sentry` object; none for an event not from a Sentry SDK. */
function sentryView(sentry: SentryParts | undefined): TopLevel {
  const out: Record<string, unknown> = {};
  if (sentry) for (const k of topLevel) if (sentry[k] !== undefined) out[k] = sentry[k];
  return out as TopLevel;
}

export function eventView(envName: string, e: EventRow): z.input<typeof eventResource> {
  return {
    name: `${envName}/error_groups/${e.group_id}/error_events/${e.uid}`,
    uid: e.uid,
    meta: { create_time: e.create_time.toISOString(), receive_time: e.receive_time.toISOString() },
    ...e.body,
    ...sentryView(e.body.sentry),
  };
}

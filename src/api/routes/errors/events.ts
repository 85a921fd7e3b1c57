// Error events of a group, one event, and the AIP-159 wildcard read by uid (docs/api.md).
import * as groupQueries from '../../../domain/errors/groups/queries.ts';
import { uidOfEventId } from '../../../domain/errors/intake/queries.ts';
import { AppError } from '../../../app-error.ts';
import { defineRoute } from '../../../http/route.ts';
import { eventList, eventParams, eventResource, eventsParams, pageQuery } from '../../../contract/errors.ts';
import { eventView } from '../../../domain/errors/events/present.ts';
import { eventPages } from '../../../domain/errors/groups/present.ts';
import { paginate } from '../../../http/paginate.ts';
import { secretKey } from '../route-parts.ts';

const base = '/v1/orgs/{org}/projects/{project}/envs/{env}/error_groups/{error_group}/error_events';

export const listEvents = defineRoute({
  method: 'get',
  path: base,
  operationId: 'listErrorEvents',
  summary: 'Occurrences of a group, newest event_time first',
  ...secretKey('Error tracking', 'observability:read'),
  params: eventsParams,
  query: pageQuery,
  response: { status: 200, description: 'A page of events', schema: eventList },
  async handle({ params, query, principal, deps }) {
    if (!(await groupQueries.getGroup(deps.db, principal.envId, params.error_group))) {
      throw new AppError('not_found', `no error group ${params.error_group} in this environment`);
    }
    const page = await paginate(deps.config, query, eventPages, (after, limit) =>
      groupQueries.listEvents(deps.db, principal.envId, params.error_group, after, limit),
    );
    return {
      error_events: page.items.map((e) => eventView(principal.envName, e)),
      next_page_token: page.next_page_token,
    };
  },
});

export const getEvent = defineRoute({
  method: 'get',
  path: `${base}/{error_event}`,
  operationId: 'getErrorEvent',
  summary: 'One occurrence; use `-` as the group to read by uid alone (404 until processed)',
  ...secretKey('Error tracking', 'observability:read'),
  params: eventParams,
  response: { status: 200, description: 'The stored occurrence; its name holds its group', schema: eventResource },
  async handle({ params, principal, deps }) {
    const group = params.error_group === '-' ? undefined : params.error_group;
    // A Sentry SDK's (or a capture's) event_id names the event as well as its uid does.
    const uid = params.error_event.startsWith('err_')
      ? params.error_event
      : await uidOfEventId(deps.db, principal.envId, params.error_event);
    const e = uid ? await groupQueries.getEvent(deps.db, principal.envId, group, uid) : undefined;
    if (!e)
      throw new AppError(
        'not_found',
        `no stored error event ${params.error_event} (an accepted event is readable once processed)`,
      );
    return eventView(principal.envName, e);
  },
});

export const eventRoutes = [listEvents, getEvent];

// /console/errors/{id}/events/{uid}: one event of a group (views/event-page.ts), with links to the
// group's next newer and older events. The event is read within the session's environment and
// the group the path names: another environment's event, or another group's, is not found.
import { z } from 'zod';
import { adjacentEvents, getEvent } from '../../domain/errors/groups/queries.ts';
import { AppError } from '../../app-error.ts';
import { defineRoute } from '../../http/route.ts';
import { consolePage } from '../page.ts';
import { render } from '../render.ts';
import { eventPageView } from '../views/event-page.ts';
import { readGroup } from './group.ts';

/** An event's uid (intake/capture.ts newEventUid): `err_`, the cell, a ULID. */
const eventUid = /^err_[0-9a-z]{2,40}$/;

export const consoleGroupEvent = defineRoute({
  ...consolePage,
  method: 'get',
  path: '/console/errors/{id}/events/{uid}',
  operationId: 'consoleGroupEvent',
  summary: "One event of an error group, with links to the group's newer and older events",
  scope: 'observability:read',
  params: z.object({ id: z.string().max(64), uid: z.string().max(64) }),
  async handle({ params, principal, deps, ctx }) {
    const group = await readGroup(deps, principal, params.id);
    const event = eventUid.test(params.uid)
      ? await getEvent(deps.db, principal.envId, group.id, params.uid)
      : undefined;
    if (!event) throw new AppError('not_found', 'There is no such event of this error group.');
    const { newer, older } = await adjacentEvents(deps.db, principal.envId, group.id, event);
    const body = eventPageView({ group, event, newer, older });
    return render(ctx, deps, { title: `Event · ${group.title}`, principal, section: 'errors', body });
  },
});

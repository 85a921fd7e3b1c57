// What the console does to an end user, each the domain's own operation as the API's:
// - GET /console/users/{id}/{revoke-sessions|lock|delete}: a page confirming it (views/user-actions.ts);
// - POST to the same path does it: revoke every session (:revokeSessions), lock (:lock: no sign-in,
//   every session ended), delete (DELETE, after the email was typed again);
// - POST …/unlock and …/sessions/{session}/revoke at once (:unlock, one session's :revoke).
// Each answers 303 back to the user's page (the list, after a delete) with what it did.
import { z } from 'zod';
import type { Context } from 'koa';
import { lockEndUser, unlockEndUser } from '../../domain/identity/users/lock.ts';
import { deleteEndUser, revokeEndUserSession, revokeEndUserSessions } from '../../domain/identity/users/users.ts';
import { normaliseEmail } from '../../domain/identity/tokens.ts';
import type { EndUserRow } from '../../domain/identity/users/queries.ts';
import { form, seeOther } from '../../html/page-route.ts';
import type { AppDeps } from '../../http/context.ts';
import { defineRoute, type ConsolePrincipal } from '../../http/route.ts';
import { consolePage, csrfExample } from '../page.ts';
import { renderSection } from '../render.ts';
import { confirmView, type UserAction } from '../views/user-actions.ts';
import { readUser } from './users.ts';

const idParams = z.object({ id: z.string().max(64) });
const back = { ...consolePage.response, status: 303, type: 'redirect', description: "To the user's page" } as const;

function showConfirm(
  ctx: Context,
  deps: AppDeps,
  principal: ConsolePrincipal,
  o: { user: EndUserRow; action: UserAction; status?: number; error?: string },
) {
  return renderSection(ctx, deps, principal, { title: o.user.email, section: 'users', status: o.status }, ({ csrf }) =>
    confirmView({ user: o.user, action: o.action, csrf, error: o.error }),
  );
}

/** The page confirming `action`; it needs auth:write, as the action does. */
const confirmPage = (action: UserAction, operationId: string, summary: string) =>
  defineRoute({
    ...consolePage,
    method: 'get',
    path: `/console/users/{id}/${action}`,
    operationId,
    summary,
    scope: 'auth:write',
    params: idParams,
    async handle({ params, principal, deps, ctx }) {
      return showConfirm(ctx, deps, principal, { user: await readUser(deps, principal, params.id), action });
    },
  });

/** A post on one user: CSRF checked, auth:write, then 303. */
const userPost = (path: string, operationId: string, summary: string) =>
  ({
    ...consolePage,
    method: 'post',
    path: `/console/users/{id}${path}`,
    operationId,
    summary,
    scope: 'auth:write',
    csrf: true,
    body: form('csrf'),
    example: { csrf: csrfExample },
    response: back,
  }) as const;

export const consoleConfirmRevokeSessions = confirmPage(
  'revoke-sessions',
  'consoleConfirmRevokeSessions',
  'Confirm ending every session of an end user',
);
export const consoleConfirmLock = confirmPage('lock', 'consoleConfirmLock', 'Confirm locking an end user');
export const consoleConfirmDelete = confirmPage('delete', 'consoleConfirmDelete', 'Confirm deleting an end user');

/** A post that does `act` to the user, then goes back to their page with the query `act` answers. */
const userActionPost = (
  path: string,
  operationId: string,
  summary: string,
  act: (deps: AppDeps, envId: string, userId: string) => Promise<string>,
) =>
  defineRoute({
    ...userPost(path, operationId, summary),
    params: idParams,
    async handle({ params, principal, deps, ctx }) {
      const u = await readUser(deps, principal, params.id);
      return seeOther(ctx, `/console/users/${u.id}?${await act(deps, principal.envId, u.id)}`);
    },
  });

export const consoleRevokeSessions = userActionPost(
  '/revoke-sessions',
  'consoleRevokeSessions',
  'End every session of an end user at once',
  async (deps, envId, id) => `revoked=${await revokeEndUserSessions(deps.db, envId, id)}`,
);

export const consoleLock = userActionPost(
  '/lock',
  'consoleLock',
  'Lock an end user: no sign-in, every session ended',
  async (deps, envId, id) => `locked=${await lockEndUser(deps.db, envId, id)}`,
);

export const consoleUnlock = userActionPost(
  '/unlock',
  'consoleUnlock',
  'Unlock an end user',
  async (deps, envId, id) => {
    await unlockEndUser(deps.db, envId, id);
    return 'unlocked=1';
  },
);

export const consoleRevokeSession = defineRoute({
  ...userPost('/sessions/{session}/revoke', 'consoleRevokeSession', "End one of an end user's sessions"),
  params: idParams.extend({ session: z.string().max(64) }),
  async handle({ params, principal, deps, ctx }) {
    const u = await readUser(deps, principal, params.id);
    await revokeEndUserSession(deps.db, principal.envId, u.id, params.session);
    return seeOther(ctx, `/console/users/${u.id}?revoked=1`);
  },
});

export const consoleDeleteUser = defineRoute({
  ...userPost('/delete', 'consoleDeleteUser', 'Delete an end user whose email was typed to confirm'),
  body: form('csrf', 'confirm'),
  example: { csrf: csrfExample, confirm: 'ada@example.com' },
  params: idParams,
  response: { ...back, description: 'To the users page' },
  async handle({ params, body: f, principal, deps, ctx }) {
    const user = await readUser(deps, principal, params.id);
    if (normaliseEmail(f.confirm ?? '') !== user.email_normalized)
      return showConfirm(ctx, deps, principal, {
        user,
        action: 'delete',
        status: 400,
        error: `The confirmation does not match ${user.email}: type the email exactly. Nothing was deleted.`,
      });
    await deleteEndUser(deps, principal.envId, user.id);
    return seeOther(ctx, '/console/users?deleted=1');
  },
});

export const userActionRoutes = [
  consoleConfirmRevokeSessions,
  consoleRevokeSessions,
  consoleConfirmLock,
  consoleLock,
  consoleUnlock,
  consoleRevokeSession,
  consoleConfirmDelete,
  consoleDeleteUser,
];

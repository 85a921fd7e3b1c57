// /console/users: the environment's end users, newest first, found by email, 50 a page;
// /console/users/{id}: one user's sessions and sign-in history (views/users.ts). Revoking ends every
// session and refresh token of the user at once (domain/identity/users/users.ts), as the API's
// :revokeSessions.
import { z } from 'zod';
import { sessionState } from '../../domain/identity/present.ts';
import { byId } from '../../contract/pages.ts';
import { sessionQueries } from '../../domain/identity/sessions/queries.ts';
import { usersQueries } from '../../domain/identity/users/queries.ts';
import { normaliseEmail } from '../../domain/identity/tokens.ts';
import type { EndUserRow } from '../../domain/identity/users/queries.ts';
import { requireEndUser, revokeEndUserSessions } from '../../domain/identity/users/users.ts';
import { AppError } from '../../app-error.ts';
import { form, seeOther, text } from '../../html/page-route.ts';
import type { AppDeps } from '../../http/context.ts';
import { defineRoute, type ConsolePrincipal } from '../../http/route.ts';
import { consolePage } from '../page.ts';
import { pageFrom } from '../paging.ts';
import { renderSection } from '../render.ts';
import { userView, usersView } from '../views/users.ts';

const historySize = 20;
const userId = /^eu_[0-9a-z]{26}$/;
/** Users page by id (ULIDs: newest first), as the API's list, under the console's own purpose. */
const userPages = byId<EndUserRow>('console_end_users');

async function readUser(deps: AppDeps, principal: ConsolePrincipal, id: string): Promise<EndUserRow> {
  if (!userId.test(id)) throw new AppError('not_found', 'There is no such user in this environment.');
  return requireEndUser(deps.db, principal.envId, id);
}

export const consoleUsers = defineRoute({
  ...consolePage,
  method: 'get',
  path: '/console/users',
  operationId: 'consoleUsers',
  summary: "The environment's end users",
  scope: 'auth:read',
  query: z.looseObject({ email: text(320), before: text(512) }),
  async handle({ query, principal, deps, ctx }) {
    const email = query.email?.trim() || undefined;
    const page = await pageFrom(deps, query.before, userPages, (before, limit) =>
      usersQueries(deps.db).listUsers(principal.envId, { limit, before }, email && normaliseEmail(email)),
    );
    return renderSection(ctx, deps, principal, { title: 'Users', section: 'users' }, (forms) =>
      usersView({ users: page.items, email, nextToken: page.next_page_token, ...forms }),
    );
  },
});

export const consoleUser = defineRoute({
  ...consolePage,
  method: 'get',
  path: '/console/users/{id}',
  operationId: 'consoleUser',
  summary: "An end user's sessions and sign-in history",
  scope: 'auth:read',
  params: z.object({ id: z.string().max(64) }),
  query: z.looseObject({ revoked: text(12) }),
  async handle({ params, query, principal, deps, ctx }) {
    const user = await readUser(deps, principal, params.id);
    const [sessions, signIns] = await Promise.all([
      sessionQueries(deps.db).listSessions(user.id, { limit: historySize }),
      usersQueries(deps.db).listSignIns(user.id, { limit: historySize }),
    ]);
    const now = new Date();
    return renderSection(ctx, deps, principal, { title: user.email, section: 'users' }, (forms) =>
      userView({
        user,
        sessions: sessions.map((s) => ({ ...s, state: sessionState(s, now) })),
        signIns,
        shown: historySize,
        revoked: query.revoked && /^\d{1,9}$/.test(query.revoked) ? Number(query.revoked) : undefined,
        ...forms,
      }),
    );
  },
});

export const consoleRevokeSessions = defineRoute({
  ...consolePage,
  method: 'post',
  path: '/console/users/{id}/revoke-sessions',
  operationId: 'consoleRevokeSessions',
  summary: 'End every session of an end user at once',
  scope: 'auth:write',
  csrf: true,
  params: z.object({ id: z.string().max(64) }),
  body: form('csrf'),
  response: { ...consolePage.response, status: 303, type: 'redirect', description: "To the user's page" },
  async handle({ params, principal, deps, ctx }) {
    const u = await readUser(deps, principal, params.id);
    const revoked = await revokeEndUserSessions(deps.db, principal.envId, u.id);
    return seeOther(ctx, `/console/users/${u.id}?revoked=${revoked}`);
  },
});

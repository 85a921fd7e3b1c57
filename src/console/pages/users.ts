// /console/users: the environment's end users, newest first, found by part of their email (the
// API's `email_contains`), 50 a page; /console/users/{id}: one user's sessions and sign-in history
// (views/users.ts). What can be done to a user is in user-actions.ts.
import { z } from 'zod';
import { sessionState } from '../../domain/identity/present.ts';
import { byId } from '../../contract/pages.ts';
import { sessionQueries } from '../../domain/identity/sessions/queries.ts';
import { usersQueries } from '../../domain/identity/users/queries.ts';
import { normaliseEmail } from '../../domain/identity/tokens.ts';
import type { EndUserRow } from '../../domain/identity/users/queries.ts';
import { requireEndUser } from '../../domain/identity/users/users.ts';
import { AppError } from '../../app-error.ts';
import { text } from '../../html/page-route.ts';
import type { AppDeps } from '../../http/context.ts';
import { defineRoute, type ConsolePrincipal } from '../../http/route.ts';
import { plural } from '../format.ts';
import { consolePage } from '../page.ts';
import { pageFrom } from '../paging.ts';
import { renderSection } from '../render.ts';
import { userView, usersView } from '../views/users.ts';

const historySize = 20;
const userId = /^eu_[0-9a-z]{26}$/;
/** Users page by id (ULIDs: newest first), as the API's list, under the console's own purpose. */
const userPages = byId<EndUserRow>('console_end_users');

export async function readUser(deps: AppDeps, principal: ConsolePrincipal, id: string): Promise<EndUserRow> {
  if (!userId.test(id)) throw new AppError('not_found', 'There is no such user in this environment.');
  return requireEndUser(deps.db, principal.envId, id);
}

const count = (v: string | undefined): number | undefined => (v && /^\d{1,9}$/.test(v) ? Number(v) : undefined);

/** What the action the user page was sent back from did (user-actions.ts). */
function notice(q: { revoked?: string | undefined; locked?: string | undefined; unlocked?: string | undefined }) {
  const revoked = count(q.revoked);
  const locked = count(q.locked);
  if (locked !== undefined) return `Locked; ${plural(locked, 'session')} revoked.`;
  if (revoked !== undefined) return `${plural(revoked, 'session')} revoked.`;
  return q.unlocked === '1' ? 'Unlocked: the user can sign in again.' : undefined;
}

export const consoleUsers = defineRoute({
  ...consolePage,
  method: 'get',
  path: '/console/users',
  operationId: 'consoleUsers',
  summary: "The environment's end users",
  scope: 'auth:read',
  query: z.looseObject({ email: text(320), before: text(512), deleted: text(1) }),
  async handle({ query, principal, deps, ctx }) {
    const email = query.email?.trim() || undefined;
    const filter = { emailContains: email && normaliseEmail(email) };
    const page = await pageFrom(deps, query.before, userPages, (before, limit) =>
      usersQueries(deps.db).listUsers(principal.envId, { limit, before }, filter),
    );
    const deleted = query.deleted === '1';
    return renderSection(ctx, deps, principal, { title: 'Users', section: 'users' }, (forms) =>
      usersView({ users: page.items, email, deleted, nextToken: page.next_page_token, ...forms }),
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
  query: z.looseObject({ revoked: text(12), locked: text(12), unlocked: text(1) }),
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
        notice: notice(query),
        ...forms,
      }),
    );
  },
});

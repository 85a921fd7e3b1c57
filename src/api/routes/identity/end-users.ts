// End users, sessions and sign-in history for the application's server (secret key, docs/api.md
// "Identity"). Every query is scoped by the key's environment.
import { z } from 'zod';
import type { Db } from '../../../db.ts';
import { sessionQueries } from '../../../domain/identity/sessions/queries.ts';
import { usersQueries } from '../../../domain/identity/users/queries.ts';
import { normaliseEmail } from '../../../domain/identity/tokens.ts';
import { resetTotp } from '../../../domain/identity/factors/totp.ts';
import {
  createEndUser,
  deleteEndUser,
  requireEndUser,
  revokeEndUserSession,
  revokeEndUserSessions,
} from '../../../domain/identity/users/users.ts';
import { lockEndUser, unlockEndUser } from '../../../domain/identity/users/lock.ts';
import {
  email,
  endUser,
  endUserList,
  endUserParams,
  endUserSessionParams,
  envParams,
  pageQuery,
  password,
  session,
  sessionList,
  signInList,
} from '../../../contract/identity.ts';
import {
  endUserPages,
  endUserResource,
  sessionPages,
  sessionResource,
  signInPages,
  signInResource,
} from '../../../domain/identity/present.ts';
import type { Keyset } from '../../../contract/pages.ts';
import type { AppDeps, Principal } from '../../../http/context.ts';
import { defineRoute, type Method } from '../../../http/route.ts';
import { listPage, secretKey } from '../route-parts.ts';

const base = '/v1/orgs/{org}/projects/{project}/envs/{env}/end_users';
const read = secretKey('End users', 'auth:read');
const write = secretKey('End users', 'auth:write');

/** A route on one end user: its method, what follows the end user's name, who may call it, its id. */
const onEndUser = (method: Method, suffix: string, access: typeof read | typeof write, operationId: string) => ({
  method,
  operationId,
  path: `${base}/{end_user}${suffix}`,
  ...access,
  params: endUserParams,
});

/** The end user as stored now; 404 for one of another environment. */
async function endUserNow(deps: AppDeps, principal: Principal, id: string): Promise<z.input<typeof endUser>> {
  return endUserResource(principal.envName, await requireEndUser(deps.db, principal.envId, id));
}

export const createEndUserRoute = defineRoute({
  method: 'post',
  path: base,
  operationId: 'createEndUser',
  summary: 'Create an end user, with or without a password',
  ...write,
  params: envParams,
  body: z.object({ email, password: password.optional(), email_verified: z.boolean().optional() }),
  example: { email: 'ada@example.com', password: 'correct horse battery staple 42', email_verified: true },
  response: { status: 201, description: 'The new end user', schema: endUser },
  async handle({ body, principal, deps }) {
    return endUserResource(principal.envName, await createEndUser(deps, principal.envId, body));
  },
});

export const listEndUsers = defineRoute({
  method: 'get',
  path: base,
  operationId: 'listEndUsers',
  summary: 'List end users, newest first; filter by email, or by part of one',
  ...read,
  params: envParams,
  query: pageQuery.extend({
    email: z.string().max(320).optional().meta({ description: 'Exactly this address, any case' }),
    email_contains: z
      .string()
      .max(320)
      .optional()
      .meta({ description: 'Addresses containing this text, any case; % and _ match themselves' }),
  }),
  response: { status: 200, description: 'A page of end users', schema: endUserList },
  async handle({ query, principal, deps }) {
    const filter = {
      email: query.email ? normaliseEmail(query.email) : undefined,
      emailContains: query.email_contains ? normaliseEmail(query.email_contains) : undefined,
    };
    const present = (u: Parameters<typeof endUserResource>[1]) => endUserResource(principal.envName, u);
    return listPage(deps, query, { collection: 'end_users', keyset: endUserPages, present }, (before, limit) =>
      usersQueries(deps.db).listUsers(principal.envId, { limit, before }, filter),
    );
  },
});

export const getEndUser = defineRoute({
  ...onEndUser('get', '', read, 'getEndUser'),
  summary: 'Get an end user',
  response: { status: 200, description: 'The end user', schema: endUser },
  async handle({ params, principal, deps }) {
    return endUserNow(deps, principal, params.end_user);
  },
});

export const deleteEndUserRoute = defineRoute({
  ...onEndUser('delete', '', write, 'deleteEndUser'),
  summary: 'Delete an end user: every session ends at once',
  response: { status: 200, description: 'Deleted', schema: z.object({}) },
  async handle({ params, principal, deps }) {
    await deleteEndUser(deps, principal.envId, params.end_user);
    return {};
  },
});

export const revokeSessions = defineRoute({
  ...onEndUser('post', ':revokeSessions', write, 'revokeEndUserSessions'),
  summary: 'End every session of an end user at once',
  response: { status: 200, description: 'How many sessions ended', schema: z.object({ revoked: z.number().int() }) },
  async handle({ params, principal, deps }) {
    return { revoked: await revokeEndUserSessions(deps.db, principal.envId, params.end_user) };
  },
});

/** `:lock` and `:unlock`: change the lock, then answer the end user as it is now. */
const lockRoute = (
  action: 'lock' | 'unlock',
  summary: string,
  run: (db: Db, envId: string, id: string) => Promise<unknown>,
) =>
  defineRoute({
    ...onEndUser('post', `:${action}`, write, `${action}EndUser`),
    summary,
    response: { status: 200, description: `The ${action}ed end user`, schema: endUser },
    async handle({ params, principal, deps }) {
      await run(deps.db, principal.envId, params.end_user);
      return endUserNow(deps, principal, params.end_user);
    },
  });

export const lock = lockRoute(
  'lock',
  'Lock an end user: no sign-in until unlocked, and every session ends at once',
  lockEndUser,
);
export const unlock = lockRoute(
  'unlock',
  'Unlock an end user: sign-in works again (sessions ended by the lock stay ended)',
  unlockEndUser,
);

export const revokeSession = defineRoute({
  method: 'post',
  path: `${base}/{end_user}/sessions/{session}:revoke`,
  operationId: 'revokeEndUserSession',
  ...write,
  params: endUserSessionParams,
  summary: "End one of an end user's sessions; the others go on",
  response: { status: 200, description: 'The session, revoked', schema: session },
  async handle({ params, principal, deps }) {
    const s = await revokeEndUserSession(deps.db, principal.envId, params.end_user, params.session);
    return sessionResource(principal.envName, s);
  },
});

export const resetFactor = defineRoute({
  ...onEndUser('delete', '/factors/totp', write, 'resetEndUserTotp'),
  summary: "Remove an end user's TOTP factor and recovery codes (lost device)",
  response: { status: 200, description: 'Removed (or there was none)', schema: endUser },
  async handle({ params, principal, deps }) {
    await resetTotp(deps.db, await requireEndUser(deps.db, principal.envId, params.end_user));
    return endUserNow(deps, principal, params.end_user);
  },
});

/**
 * A page of one end user's history, newest first, under the collection its keyset names; 404 for
 * an end user of another environment.
 */
function endUserHistory<Row, Item>(o: {
  operationId: string;
  summary: string;
  response: { description: string; schema: z.ZodType };
  keyset: Keyset<Row, string>;
  present: (row: Row, envName: string) => Item;
  fetch: (db: Db, endUser: string, page: { limit: number; before?: string }) => Promise<Row[]>;
}) {
  return defineRoute({
    method: 'get',
    path: `${base}/{end_user}/${o.keyset.purpose}`,
    operationId: o.operationId,
    summary: o.summary,
    ...read,
    params: endUserParams,
    query: pageQuery,
    response: { status: 200, ...o.response },
    async handle({ params, query, principal, deps }) {
      await requireEndUser(deps.db, principal.envId, params.end_user);
      const list = {
        collection: o.keyset.purpose,
        keyset: o.keyset,
        present: (r: Row) => o.present(r, principal.envName),
      };
      return listPage(deps, query, list, (before, limit) => o.fetch(deps.db, params.end_user, { limit, before }));
    },
  });
}

export const listSessions = endUserHistory({
  operationId: 'listEndUserSessions',
  summary: "An end user's sessions, newest first",
  response: { description: 'A page of sessions', schema: sessionList },
  keyset: sessionPages,
  present: (s, envName) => sessionResource(envName, s),
  fetch: (db, endUser, page) => sessionQueries(db).listSessions(endUser, page),
});

export const listSignIns = endUserHistory({
  operationId: 'listEndUserSignIns',
  summary: 'Sign-in history (kept 90 days), newest first',
  response: { description: 'A page of sign-ins', schema: signInList },
  keyset: signInPages,
  present: (r) => signInResource(r),
  fetch: (db, endUser, page) => usersQueries(db).listSignIns(endUser, page),
});

export const endUserRoutes = [
  resetFactor,
  createEndUserRoute,
  listEndUsers,
  getEndUser,
  deleteEndUserRoute,
  listSessions,
  revokeSessions,
  revokeSession,
  lock,
  unlock,
  listSignIns,
];

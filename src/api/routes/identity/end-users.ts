// End users, sessions and sign-in history for the application's server (secret key, docs/api.md
// "Identity"). Every query is scoped by the key's environment.
import { z } from 'zod';
import { sessionQueries } from '../../../domain/identity/sessions/queries.ts';
import { usersQueries } from '../../../domain/identity/users/queries.ts';
import { normaliseEmail } from '../../../domain/identity/tokens.ts';
import { resetTotp } from '../../../domain/identity/factors/totp.ts';
import {
  createEndUser,
  deleteEndUser,
  requireEndUser,
  revokeEndUserSessions,
} from '../../../domain/identity/users/users.ts';
import {
  email,
  endUser,
  endUserList,
  endUserParams,
  envParams,
  pageQuery,
  password,
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
import { paginate } from '../../../http/paginate.ts';
import { defineRoute } from '../../../http/route.ts';

const base = '/v1/orgs/{org}/projects/{project}/envs/{env}/end_users';
const tags = ['End users'];

export const createEndUserRoute = defineRoute({
  method: 'post',
  path: base,
  operationId: 'createEndUser',
  summary: 'Create an end user, with or without a password',
  tags,
  auth: 'secret',
  scope: 'auth:write',
  params: envParams,
  body: z.object({ email, password: password.optional(), email_verified: z.boolean().optional() }),
  response: { status: 201, description: 'The new end user', schema: endUser },
  async handle({ body, principal, deps }) {
    return endUserResource(principal.envName, await createEndUser(deps, principal.envId, body));
  },
});

export const listEndUsers = defineRoute({
  method: 'get',
  path: base,
  operationId: 'listEndUsers',
  summary: 'List end users, newest first; filter by email',
  tags,
  auth: 'secret',
  scope: 'auth:read',
  params: envParams,
  query: pageQuery.extend({ email: z.string().max(320).optional() }),
  response: { status: 200, description: 'A page of end users', schema: endUserList },
  async handle({ query, principal, deps }) {
    const email = query.email ? normaliseEmail(query.email) : undefined;
    const page = await paginate(deps.config, query, endUserPages, (before, limit) =>
      usersQueries(deps.db).listUsers(principal.envId, { limit, before }, email),
    );
    return {
      end_users: page.items.map((u) => endUserResource(principal.envName, u)),
      next_page_token: page.next_page_token,
    };
  },
});

export const getEndUser = defineRoute({
  method: 'get',
  path: `${base}/{end_user}`,
  operationId: 'getEndUser',
  summary: 'Get an end user',
  tags,
  auth: 'secret',
  scope: 'auth:read',
  params: endUserParams,
  response: { status: 200, description: 'The end user', schema: endUser },
  async handle({ params, principal, deps }) {
    return endUserResource(principal.envName, await requireEndUser(deps.db, principal.envId, params.end_user));
  },
});

export const deleteEndUserRoute = defineRoute({
  method: 'delete',
  path: `${base}/{end_user}`,
  operationId: 'deleteEndUser',
  summary: 'Delete an end user: every session ends at once',
  tags,
  auth: 'secret',
  scope: 'auth:write',
  params: endUserParams,
  response: { status: 200, description: 'Deleted', schema: z.object({}) },
  async handle({ params, principal, deps }) {
    await deleteEndUser(deps, principal.envId, params.end_user);
    return {};
  },
});

export const listSessions = defineRoute({
  method: 'get',
  path: `${base}/{end_user}/sessions`,
  operationId: 'listEndUserSessions',
  summary: "An end user's sessions, newest first",
  tags,
  auth: 'secret',
  scope: 'auth:read',
  params: endUserParams,
  query: pageQuery,
  response: { status: 200, description: 'A page of sessions', schema: sessionList },
  async handle({ params, query, principal, deps }) {
    await requireEndUser(deps.db, principal.envId, params.end_user);
    const page = await paginate(deps.config, query, sessionPages, (before, limit) =>
      sessionQueries(deps.db).listSessions(params.end_user, { limit, before }),
    );
    return {
      sessions: page.items.map((s) => sessionResource(principal.envName, s)),
      next_page_token: page.next_page_token,
    };
  },
});

export const revokeSessions = defineRoute({
  method: 'post',
  path: `${base}/{end_user}:revokeSessions`,
  operationId: 'revokeEndUserSessions',
  summary: 'End every session of an end user at once',
  tags,
  auth: 'secret',
  scope: 'auth:write',
  params: endUserParams,
  response: { status: 200, description: 'How many sessions ended', schema: z.object({ revoked: z.number().int() }) },
  async handle({ params, principal, deps }) {
    return { revoked: await revokeEndUserSessions(deps.db, principal.envId, params.end_user) };
  },
});

export const listSignIns = defineRoute({
  method: 'get',
  path: `${base}/{end_user}/sign_ins`,
  operationId: 'listEndUserSignIns',
  summary: 'Sign-in history (kept 90 days), newest first',
  tags,
  auth: 'secret',
  scope: 'auth:read',
  params: endUserParams,
  query: pageQuery,
  response: { status: 200, description: 'A page of sign-ins', schema: signInList },
  async handle({ params, query, principal, deps }) {
    await requireEndUser(deps.db, principal.envId, params.end_user);
    const page = await paginate(deps.config, query, signInPages, (before, limit) =>
      usersQueries(deps.db).listSignIns(params.end_user, { limit, before }),
    );
    return { sign_ins: page.items.map(signInResource), next_page_token: page.next_page_token };
  },
});

export const resetFactor = defineRoute({
  method: 'delete',
  path: `${base}/{end_user}/factors/totp`,
  operationId: 'resetEndUserTotp',
  summary: "Remove an end user's TOTP factor and recovery codes (lost device)",
  tags,
  auth: 'secret',
  scope: 'auth:write',
  params: endUserParams,
  response: { status: 200, description: 'Removed (or there was none)', schema: endUser },
  async handle({ params, principal, deps }) {
    await resetTotp(deps.db, await requireEndUser(deps.db, principal.envId, params.end_user));
    return endUserResource(principal.envName, await requireEndUser(deps.db, principal.envId, params.end_user));
  },
});

export const endUserRoutes = [
  resetFactor,
  createEndUserRoute,
  listEndUsers,
  getEndUser,
  deleteEndUserRoute,
  listSessions,
  revokeSessions,
  listSignIns,
];

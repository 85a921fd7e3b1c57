// /console/users: the environment's end users, newest first (email, verified, created, last
// sign-in), found by email, 50 a page, each with "Revoke sessions"; /console/users/{id}: one user's
// sessions and sign-in history. Revoking ends every session and refresh token of the user at once
// (domain/identity/users/users.ts), as the API's :revokeSessions.
import type { Context } from 'koa';
import { z } from 'zod';
import { sessionState } from '../../domain/identity/present.ts';
import type { ConsoleSession } from '../../domain/console/sessions.ts';
import { identityQueries } from '../../domain/identity/queries.ts';
import { normaliseEmail } from '../../domain/identity/tokens.ts';
import type { EndUserRow } from '../../domain/identity/users/queries.ts';
import { requireEndUser, revokeEndUserSessions } from '../../domain/identity/users/users.ts';
import { AppError } from '../../app-error.ts';
import type { AppDeps } from '../../http/context.ts';
import { csrfToken } from '../../http/csrf.ts';
import { defineRoute } from '../../http/route.ts';
import { html, type Html } from '../../html/html.ts';
import { form, seeOther, text } from '../../html/page-route.ts';
import { can, postWith, render, sessionWith } from '../context.ts';
import { plural, timeTag } from '../format.ts';
import { consolePage } from '../page.ts';

const pageSize = 50;
const historySize = 20;
const userId = /^eu_[0-9a-z]{26}$/;

function revokeButton(ctx: Context, deps: AppDeps, session: ConsoleSession, u: EndUserRow): Html {
  const writable = can(session, 'auth:write');
  return html`<form method="post" action="/console/users/${u.id}/revoke-sessions" class="inline">
<input type="hidden" name="csrf" value="${csrfToken(ctx, deps.config)}">
<button type="submit" aria-label="Revoke sessions of ${u.email}"${writable ? '' : html` disabled`}>Revoke sessions</button>
</form>`;
}

const readOnly = (session: ConsoleSession) =>
  can(session, 'auth:write')
    ? ''
    : html`<p class="muted">Read-only: the key this console was opened with lacks auth:write.</p>`;

export const consoleUsers = defineRoute({
  ...consolePage,
  method: 'get',
  path: '/console/users',
  operationId: 'consoleUsers',
  summary: "The environment's end users",
  query: z.looseObject({ email: text(320), before: text(64) }),
  async handle({ query, deps, ctx }) {
    const session = await sessionWith(ctx, deps, 'auth:read');
    if (!session) return undefined;
    const email = query.email?.trim() || undefined;
    const before = query.before && userId.test(query.before) ? query.before : undefined;
    const rows = await identityQueries(deps.db).listUsers(
      session.envId,
      { limit: pageSize + 1, ...(before ? { before } : {}) },
      email ? normaliseEmail(email) : undefined,
    );
    const users = rows.slice(0, pageSize);
    const next = rows.length > pageSize ? users.at(-1)!.id : undefined;
    render(ctx, deps, {
      title: 'Users',
      session,
      section: 'users',
      body: html`<h1>Users</h1>
<form method="get" action="/console/users" class="search" role="search">
<label for="email">Email</label><input id="email" name="email" type="text" value="${email ?? ''}" autocomplete="off" spellcheck="false">
<button type="submit">Find</button>${email ? html` <a href="/console/users">All users</a>` : ''}
</form>
${readOnly(session)}
${
  users.length === 0
    ? html`<p class="empty">${email ? `No user has the email ${email}.` : 'No users yet.'}</p>`
    : html`<table><caption class="muted">End users, newest first</caption>
<thead><tr><th scope="col">Email</th><th scope="col">Verified</th><th scope="col">Created</th><th scope="col">Last sign-in</th><th scope="col">Sessions</th></tr></thead>
<tbody>${users.map(
        (u) => html`<tr><td><a class="title" href="/console/users/${u.id}">${u.email}</a></td>
<td>${u.email_verified_time ? 'Yes' : 'No'}</td><td>${timeTag(u.create_time)}</td><td>${timeTag(u.last_sign_in_time)}</td>
<td>${revokeButton(ctx, deps, session, u)}</td></tr>`,
      )}</tbody></table>`
}
${next ? html`<nav class="pager" aria-label="Pages"><a href="${`/console/users?${new URLSearchParams({ ...(email ? { email } : {}), before: next })}`}">Older users</a></nav>` : ''}`,
    });
    return undefined;
  },
});

export const consoleUser = defineRoute({
  ...consolePage,
  method: 'get',
  path: '/console/users/{id}',
  operationId: 'consoleUser',
  summary: "An end user's sessions and sign-in history",
  params: z.object({ id: z.string().max(64) }),
  query: z.looseObject({ revoked: text(12) }),
  async handle({ params, query, deps, ctx }) {
    const session = await sessionWith(ctx, deps, 'auth:read');
    if (!session) return undefined;
    const u = await readUser(deps, session, params.id);
    const q = identityQueries(deps.db);
    const [sessions, signIns] = await Promise.all([
      q.listSessions(u.id, { limit: historySize }),
      q.listSignIns(u.id, { limit: historySize }),
    ]);
    const revoked = query.revoked && /^\d{1,9}$/.test(query.revoked) ? Number(query.revoked) : undefined;
    const now = new Date();
    render(ctx, deps, {
      title: u.email,
      session,
      section: 'users',
      body: html`<p><a href="/console/users">← Users</a></p>
${revoked !== undefined ? html`<div class="alert ok" role="status">${plural(revoked, 'session')} revoked.</div>` : ''}
<h1 class="title">${u.email}</h1>
<p>${u.email_verified_time ? 'Verified' : 'Not verified'} · created ${timeTag(u.create_time)} · last sign-in ${timeTag(u.last_sign_in_time)}${u.totp_active ? ' · TOTP on' : ''}</p>
<div class="actions">${revokeButton(ctx, deps, session, u)}</div>
${readOnly(session)}
<h2>Sessions</h2>
${
  sessions.length === 0
    ? html`<p class="muted">No sessions.</p>`
    : html`<table><caption class="muted">The latest ${historySize}, newest first</caption><thead><tr><th scope="col">State</th><th scope="col">Method</th><th scope="col">Started</th><th scope="col">Last active</th><th scope="col">IP</th><th scope="col">Browser</th></tr></thead><tbody>${sessions.map(
        (s) =>
          html`<tr><td><span class="state ${sessionState(s, now)}">${sessionState(s, now)}</span></td><td>${s.method}</td><td>${timeTag(s.create_time)}</td><td>${timeTag(s.last_active_time)}</td><td>${s.ip ?? ''}</td><td class="message">${s.user_agent ?? ''}</td></tr>`,
      )}</tbody></table>`
}
<h2>Sign-in history</h2>
${
  signIns.length === 0
    ? html`<p class="muted">No sign-ins in the last 90 days.</p>`
    : html`<table><caption class="muted">The latest ${historySize}, newest first (kept 90 days)</caption><thead><tr><th scope="col">Time</th><th scope="col">Method</th><th scope="col">Outcome</th><th scope="col">IP</th><th scope="col">Browser</th></tr></thead><tbody>${signIns.map(
        (r) =>
          html`<tr><td>${timeTag(r.time)}</td><td>${r.method}</td><td>${r.outcome}</td><td>${r.ip ?? ''}</td><td class="message">${r.user_agent ?? ''}</td></tr>`,
      )}</tbody></table>`
}`,
    });
    return undefined;
  },
});

async function readUser(deps: AppDeps, session: ConsoleSession, id: string): Promise<EndUserRow> {
  if (!userId.test(id)) throw new AppError('not_found', 'There is no such user in this environment.');
  return requireEndUser(deps.db, session.envId, id);
}

export const consoleRevokeSessions = defineRoute({
  ...consolePage,
  method: 'post',
  path: '/console/users/{id}/revoke-sessions',
  operationId: 'consoleRevokeSessions',
  summary: 'End every session of an end user at once',
  params: z.object({ id: z.string().max(64) }),
  body: form('csrf'),
  response: { ...consolePage.response, status: 303, type: 'redirect', description: "To the user's page" },
  async handle({ params, body: f, deps, ctx }) {
    const session = await postWith(ctx, deps, f.csrf, 'auth:write');
    if (!session) return undefined;
    const u = await readUser(deps, session, params.id);
    const revoked = await revokeEndUserSessions(deps.db, session.envId, u.id);
    return seeOther(ctx, `/console/users/${u.id}?revoked=${revoked}`);
  },
});

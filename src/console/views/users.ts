// The users pages: the environment's end users, newest first (email, verified, created, last
// sign-in), found by part of their email, each with "Revoke sessions"; and one user's sessions
// (each active one with its own "Revoke") and sign-in history, with "Revoke sessions", "Lock" or
// "Unlock" and "Delete user" (user-actions.ts). A key without auth:write sees the buttons disabled.
import type { SignInRow, EndUserRow } from '../../domain/identity/users/queries.ts';
import type { SessionRow } from '../../domain/identity/sessions/queries.ts';
import { html, type Html } from '../../html/html.ts';
import { timeTag } from '../format.ts';
import { alert, badge, dotted, empty, pager, readOnlyNote, table, tableRow } from './components.ts';
import { confirmButton, revokeSessionButton, userActions } from './user-actions.ts';

export type UserViewRow = Pick<
  EndUserRow,
  'id' | 'email' | 'email_verified_time' | 'create_time' | 'last_sign_in_time' | 'totp_active' | 'locked_time'
>;

export interface UsersData {
  users: readonly UserViewRow[];
  /** The part of an email searched for, if any. */
  email: string | undefined;
  /** A user was just deleted. */
  deleted?: boolean | undefined;
  nextToken: string | undefined;
  csrf: string;
  /** The key has auth:write. */
  writable: boolean;
}

export type UserSession = Pick<
  SessionRow,
  'id' | 'method' | 'create_time' | 'last_active_time' | 'ip' | 'user_agent'
> & {
  state: string;
};

export interface UserData {
  user: UserViewRow;
  sessions: readonly UserSession[];
  signIns: readonly Pick<SignInRow, 'time' | 'method' | 'outcome' | 'ip' | 'user_agent'>[];
  /** How many of each the page shows at most. */
  shown: number;
  /** What was just done: sessions revoked (by "Revoke sessions", a session's "Revoke" or "Lock"). */
  notice?: string | undefined;
  csrf: string;
  writable: boolean;
}

const readOnly = (writable: boolean): Html | '' => (writable ? '' : readOnlyNote('auth:write', true));

function userRow(u: UserViewRow, d: UsersData): Html {
  return tableRow([
    html`<a class="title" href="/console/users/${u.id}">${u.email}</a>${u.locked_time ? html` ${badge('locked')}` : ''}`,
    u.email_verified_time ? 'Yes' : 'No',
    timeTag(u.create_time),
    timeTag(u.last_sign_in_time),
    confirmButton(u, 'revoke-sessions', 'Revoke sessions', d.writable),
  ]);
}

export function usersView(d: UsersData): Html {
  const list =
    d.users.length === 0
      ? empty(d.email ? `No user's email contains ${d.email}.` : 'No users yet.')
      : table({
          caption: 'End users, newest first',
          scroll: 'Users',
          columns: ['Email', 'Verified', 'Created', 'Last sign-in', 'Sessions'],
          rows: d.users.map((u) => userRow(u, d)),
        });
  const next = d.nextToken
    ? `/console/users?${new URLSearchParams({ ...(d.email ? { email: d.email } : {}), before: d.nextToken })}`
    : undefined;
  return html`${d.deleted ? alert('ok', 'User deleted.') : ''}<h1>Users</h1>
<form method="get" action="/console/users" class="search" role="search">
<label for="email">Email contains</label><input id="email" name="email" type="text" value="${d.email ?? ''}"
 autocomplete="off" spellcheck="false">
<button type="submit">Find</button>${d.email ? html` <a href="/console/users">All users</a>` : ''}
</form>
${readOnly(d.writable)}
${list}
${pager(next, 'Older users')}`;
}

function sessionsTable(d: UserData): Html {
  if (d.sessions.length === 0) return html`<p class="muted">No sessions.</p>`;
  const rows = d.sessions.map((s) =>
    tableRow([
      badge(s.state),
      s.method,
      timeTag(s.create_time),
      timeTag(s.last_active_time),
      s.ip ?? '',
      { value: s.user_agent ?? '', className: 'message' },
      s.state === 'active' ? revokeSessionButton(d.user.id, s.id, d.csrf, d.writable) : '',
    ]),
  );
  const columns = ['State', 'Method', 'Started', 'Last active', 'IP', 'Browser', 'Revoke'];
  return table({ caption: `The latest ${d.shown}, newest first`, scroll: 'Sessions', columns, rows });
}

function signInsTable(d: UserData): Html {
  if (d.signIns.length === 0) return html`<p class="muted">No sign-ins in the last 90 days.</p>`;
  const rows = d.signIns.map((r) =>
    tableRow([timeTag(r.time), r.method, r.outcome, r.ip ?? '', { value: r.user_agent ?? '', className: 'message' }]),
  );
  const columns = ['Time', 'Method', 'Outcome', 'IP', 'Browser'];
  return table({
    caption: `The latest ${d.shown}, newest first (kept 90 days)`,
    scroll: 'Sign-in history',
    columns,
    rows,
  });
}

export function userView(d: UserData): Html {
  const u = d.user;
  return html`<p><a href="/console/users">← Users</a></p>
${d.notice ? alert('ok', d.notice) : ''}
<h1 class="title">${u.email}</h1>
<p>${dotted([
    u.email_verified_time ? 'Verified' : 'Not verified',
    html`created ${timeTag(u.create_time)}`,
    html`last sign-in ${timeTag(u.last_sign_in_time)}`,
    u.totp_active && 'TOTP on',
    u.locked_time && html`${badge('locked')} since ${timeTag(u.locked_time)}`,
  ])}</p>
${userActions(u, d.csrf, d.writable)}
${readOnly(d.writable)}
<h2>Sessions</h2>
${sessionsTable(d)}
<h2>Sign-in history</h2>
${signInsTable(d)}`;
}

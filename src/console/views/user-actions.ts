// What a person may do to an end user from the console, and the pages that confirm it first:
// "Revoke sessions", "Lock" and "Delete user" each open a page saying what will happen (GET, so no
// script is needed), whose button then posts; deleting asks for the email typed again, as a
// restore asks for the target's name (views/backups.ts), since it cannot be undone. "Unlock" and
// a single session's "Revoke" post at once: they take nothing away that cannot be given back.
import { html, type Html } from '../../html/html.ts';
import { alert, disabledIf, postForm } from './components.ts';

export type UserAction = 'revoke-sessions' | 'lock' | 'delete';

export interface ActionUser {
  id: string;
  email: string;
  locked_time: Date | null;
}

const ariaVerb: Record<UserAction, string> = {
  'revoke-sessions': 'Revoke sessions of',
  lock: 'Lock',
  delete: 'Delete user',
};

/** A button that opens an action's confirmation page: a GET form, so it can be disabled like the others. */
export function confirmButton(u: ActionUser, action: UserAction, label: string, writable: boolean): Html {
  const aria = html`aria-label="${ariaVerb[action]} ${u.email}"`;
  return html`<form method="get" action="/console/users/${u.id}/${action}" class="inline">
<button type="submit" ${aria}${disabledIf(!writable)}>${label}</button>
</form>`;
}

function unlockButton(u: ActionUser, csrf: string, writable: boolean): Html {
  return postForm({
    action: `/console/users/${u.id}/unlock`,
    csrf,
    className: 'inline',
    body: html`<button type="submit" aria-label="Unlock ${u.email}"${disabledIf(!writable)}>Unlock</button>`,
  });
}

/** The user page's row of actions. */
export function userActions(u: ActionUser, csrf: string, writable: boolean): Html {
  return html`<div class="actions">${confirmButton(u, 'revoke-sessions', 'Revoke sessions', writable)}${
    u.locked_time ? unlockButton(u, csrf, writable) : confirmButton(u, 'lock', 'Lock', writable)
  }${confirmButton(u, 'delete', 'Delete user', writable)}</div>`;
}

/** A single session's "Revoke", in its row of the sessions table. */
export function revokeSessionButton(userId: string, sessionId: string, csrf: string, writable: boolean): Html {
  return postForm({
    action: `/console/users/${userId}/sessions/${sessionId}/revoke`,
    csrf,
    className: 'inline',
    body: html`<button type="submit" aria-label="Revoke session ${sessionId}"${disabledIf(!writable)}>Revoke</button>`,
  });
}

const what: Record<UserAction, { title: string; button: string; says: string }> = {
  'revoke-sessions': {
    title: 'Revoke every session of',
    button: 'Revoke sessions',
    says: 'Every session of this user ends now, on every device, with sign-in tickets and device approvals not yet used. The user can sign in again.',
  },
  lock: {
    title: 'Lock',
    button: 'Lock user',
    says: 'Every session of this user ends now, and no sign-in of any kind (password, social, device) works until the user is unlocked.',
  },
  delete: {
    title: 'Delete',
    button: 'Delete user',
    says: 'The user, every session, factor and the sign-in history are removed now. This cannot be undone; the address may sign up again.',
  },
};

export interface ConfirmData {
  user: ActionUser;
  action: UserAction;
  csrf: string;
  /** Why the last attempt did nothing (a mistyped email). */
  error?: string | undefined;
}

export function confirmView(d: ConfirmData): Html {
  const w = what[d.action];
  const u = d.user;
  const typed =
    d.action === 'delete'
      ? html`<label for="confirm">Type the user's email to confirm</label>
<input id="confirm" name="confirm" type="text" autocomplete="off" spellcheck="false" required>`
      : '';
  return html`<p><a href="/console/users/${u.id}">← ${u.email}</a></p>
${d.error ? alert('error', d.error) : ''}
<h1>${w.title} ${u.email}?</h1>
<p>${w.says}</p>
${postForm({
  action: `/console/users/${u.id}/${d.action}`,
  csrf: d.csrf,
  className: 'confirm',
  body: html`${typed}
<button type="submit" class="danger">${w.button}</button> <a href="/console/users/${u.id}">Cancel</a>`,
})}`;
}

// The portal's pages. Forms post back to the portal with their CSRF token; every input has a
// label, errors are announced (role=alert) and referenced by the inputs (aria-describedby), and
// the first field is the first stop in the tab order.
import type { DeviceRequest } from '../domain/oauth/queries.ts';
import { formatUserCode } from '../domain/oauth/user-code.ts';
import { html, type Html } from '../html/html.ts';
import { errorBox } from './layout.ts';

export interface SocialButton {
  label: string;
  href: string;
}

export interface FormBase {
  csrf: string;
  error?: string | undefined;
}

const describedBy = (error: string | undefined) => (error ? 'form-error' : undefined);
const hidden = (fields: Record<string, string | undefined>) =>
  Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => html`<input type="hidden" name="${k}" value="${v!}">`);

export function signInView(
  o: FormBase & {
    env: string;
    redirectUrl?: string | undefined;
    email?: string | undefined;
    social: SocialButton[];
    signUpHref: string;
    notice?: string | undefined;
  },
): Html {
  const err = describedBy(o.error);
  return html`<h1>Sign in</h1><p class="lead">Welcome back. Enter your email and password.</p>
${o.notice ? html`<div class="alert ok" role="status">${o.notice}</div>` : ''}${errorBox(o.error)}
<form method="post" action="/sign-in" novalidate>
${hidden({ csrf: o.csrf, env: o.env, redirect_url: o.redirectUrl })}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required autofocus value="${o.email ?? ''}" ${err ? html`aria-describedby="${err}" aria-invalid="true"` : ''}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required ${err ? html`aria-describedby="${err}"` : ''}>
<button type="submit">Continue</button>
</form>
${o.social.length > 0 ? html`<div class="divider">or</div><div class="social">${o.social.map((s) => html`<a class="button secondary" href="${s.href}">Continue with ${s.label}</a>`)}</div>` : ''}
<p class="hint">No account yet? <a href="${o.signUpHref}">Create one</a></p>`;
}

export function totpView(o: FormBase & { state: string }): Html {
  return html`<h1>Two-step verification</h1><p class="lead">Enter the 6-digit code from your authenticator app, or one of your recovery codes.</p>
${errorBox(o.error)}
<form method="post" action="/sign-in/factor" novalidate>
${hidden({ csrf: o.csrf, state: o.state })}
<label for="code">Verification code</label>
<input id="code" name="code" type="text" class="code" inputmode="text" autocomplete="one-time-code" required autofocus maxlength="20" ${o.error ? html`aria-describedby="form-error" aria-invalid="true"` : ''}>
<p class="hint">Lost your device? Use a recovery code such as <span aria-label="four characters, dash, four characters, dash, four characters">xxxx-xxxx-xxxx</span>.</p>
<button type="submit">Verify</button>
</form>`;
}

export function signUpView(
  o: FormBase & {
    env: string;
    redirectUrl?: string | undefined;
    email?: string | undefined;
    minLength: number;
    signInHref: string;
  },
): Html {
  return html`<h1>Create your account</h1><p class="lead">Use at least ${o.minLength} characters; a few unusual words make a strong password.</p>
${errorBox(o.error)}
<form method="post" action="/sign-up" novalidate>
${hidden({ csrf: o.csrf, env: o.env, redirect_url: o.redirectUrl })}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" required autofocus value="${o.email ?? ''}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${o.minLength}" aria-describedby="password-hint${o.error ? ' form-error' : ''}">
<p class="hint" id="password-hint">${o.minLength} to 256 characters. Passwords found in data breaches are refused.</p>
<button type="submit">Create account</button>
</form>
<p class="hint">Already have an account? <a href="${o.signInHref}">Sign in</a></p>`;
}

export const checkEmailView = (email: string): Html => html`<h1>Check your email</h1>
<p class="lead" role="status">If <strong>${email}</strong> can be used, a message with a confirmation link is on its way. The link works once, for 24 hours.</p>`;

export function verifyEmailView(ok: boolean): Html {
  return ok
    ? html`<h1>Email confirmed</h1><div class="alert ok" role="status">Your email address is confirmed. You can close this page and sign in.</div>`
    : html`<h1>This link does not work</h1><div class="alert error" role="alert">The confirmation link is invalid, was already used, or has expired. Sign up again to get a new one.</div>`;
}

export function deviceEntryView(o: FormBase & { code?: string | undefined }): Html {
  return html`<h1>Connect a device</h1><p class="lead">Enter the code shown on your device or in your terminal.</p>
${errorBox(o.error)}
<form method="post" action="/device" novalidate>
${hidden({ csrf: o.csrf })}
<label for="user_code">Code</label>
<input id="user_code" name="user_code" type="text" class="code" autocomplete="off" autocapitalize="characters" spellcheck="false" required autofocus maxlength="20" placeholder="XXXX-XXXX" value="${o.code ?? ''}" ${o.error ? html`aria-describedby="form-error" aria-invalid="true"` : ''}>
<button type="submit">Continue</button>
</form>`;
}

export function consentView(o: FormBase & { request: DeviceRequest; email: string; signOutNext: string }): Html {
  const code = formatUserCode(o.request.user_code);
  return html`<h1>Allow access?</h1>
<p class="lead">Check that this code matches the one on your device: <strong class="code" aria-label="${code.split('').join(' ')}">${code}</strong></p>
${errorBox(o.error)}
<div class="client"><strong>${o.request.client_name}</strong>wants to sign in as <strong>${o.email}</strong>
${o.request.scopes.length > 0 ? html`<span>and asks for:</span><ul class="scopes">${o.request.scopes.map((s) => html`<li>${s}</li>`)}</ul>` : ''}</div>
<form method="post" action="/consent" class="row">
${hidden({ csrf: o.csrf, user_code: code })}
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
<button type="submit" name="decision" value="approve">Allow</button>
</form>
<form method="post" action="/sign-out" class="hint">${hidden({ csrf: o.csrf, next: o.signOutNext })}Not ${o.email}? <button type="submit" class="linklike">Use another account</button></form>`;
}

export const doneView = (approved: boolean, clientName: string): Html =>
  approved
    ? html`<h1>Device connected</h1><div class="alert ok" role="status"><strong>${clientName}</strong> is now signed in. You can return to your device and close this page.</div>`
    : html`<h1>Request denied</h1><div class="alert ok" role="status"><strong>${clientName}</strong> was not given access. You can close this page.</div>`;

export const signedInView = (email: string): Html =>
  html`<h1>You are signed in</h1><div class="alert ok" role="status">Signed in as <strong>${email}</strong>. You can close this page.</div>`;

export const messageView = (title: string, message: string): Html =>
  html`<h1>${title}</h1><div class="alert error" role="alert">${message}</div>`;

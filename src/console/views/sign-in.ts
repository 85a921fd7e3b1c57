// The sign-in page: a secret key opens a console session for its environment and scopes. A refusal
// is announced (role=alert) and referenced by the field (aria-describedby).
import { html, type Html } from '../../html/html.ts';
import { postForm } from './components.ts';

export interface SignInData {
  csrf: string;
  error?: string | undefined;
}

const keyHint =
  'A secret key of the environment (cairn_sk_…). It opens a session for this browser and is not stored in it.';

export function signInView(d: SignInData): Html {
  const invalid = d.error ? html` aria-invalid="true" aria-describedby="sign-in-error"` : '';
  return html`<h1>Sign in to the console</h1>
${d.error ? html`<div class="alert error" role="alert" id="sign-in-error">${d.error}</div>` : ''}
${postForm({
  action: '/console/sign-in',
  csrf: d.csrf,
  body: html`<label for="key">Secret key</label>
<input id="key" name="key" type="password" autocomplete="off" spellcheck="false" required${invalid}>
<p class="muted">${keyHint}</p>
<button class="primary" type="submit">Sign in</button>`,
})}`;
}

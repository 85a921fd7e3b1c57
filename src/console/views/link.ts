// What a console sign-in link shows before it is used. Opening a link never signs the browser in
// by itself: a link made by someone else (anyone with a key of an environment can make one) would
// otherwise swap the session of whoever opens it without a word, a login CSRF. So the page names
// the environment the link opens and, when the browser is already signed in, the one it is in, and
// only its button (a POST carrying the page's CSRF token) uses the link.
import { html, type Html } from '../../html/html.ts';
import { consoleLinkCommand, consoleLinkPath } from '../../domain/console/links.ts';

export interface LinkPageOptions {
  token: string;
  csrf: string;
  /** The environment the link opens. */
  linkEnv: string;
  /** The environment this browser is signed in to, if it is. */
  currentEnv?: string | undefined;
}

const linkForm = (o: LinkPageOptions, label: string): Html =>
  html`<form method="post" action="${consoleLinkPath}">
<input type="hidden" name="csrf" value="${o.csrf}">
<input type="hidden" name="token" value="${o.token}">
<button class="primary" type="submit">${label}</button>
</form>`;

const notAsked =
  'If you did not ask for it, close this page: anyone with a key of an environment can make such a link.';
const sameEnv = ' (the same environment, with the link’s access)';
const ends = 'Continuing ends this browser’s current session.';
const stay = 'If you did not ask for this link, stay: anyone with a key of an environment can make one.';

export function linkPage(o: LinkPageOptions): Html {
  if (o.currentEnv === undefined)
    return html`<h1>Sign in to the console</h1>
<p>This one-use link signs this browser in to the console of <strong class="title">${o.linkEnv}</strong>.</p>
<p class="muted">${notAsked}</p>
${linkForm(o, `Sign in to the console of ${o.linkEnv}`)}`;
  const same = o.currentEnv === o.linkEnv;
  return html`<h1>Switch console session?</h1>
<p>This browser is signed in to the console of <strong class="title">${o.currentEnv}</strong>.</p>
<p>The link you opened is for <strong class="title">${o.linkEnv}</strong>${same ? sameEnv : ''}. ${ends}</p>
<p class="muted">${stay}</p>
${linkForm(o, `Continue as ${o.linkEnv}`)}
<a class="button" href="/console/errors">Stay</a>`;
}

/** A used, expired or unknown link: why, and the command that prints another (as the start banner does). */
export const linkGoneMessage = (minutes: number, envName: string | undefined): string =>
  `This sign-in link was already used or has expired (links work once, for ${minutes} minutes). ` +
  `Print a new one with \`${consoleLinkCommand(envName ?? '<env name>')}\`, ` +
  'or sign in with a secret key.';

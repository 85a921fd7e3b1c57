// The console's page layout: "Skip to content" first (WCAG 2.2 §2.4.1 Bypass Blocks: a keyboard
// reaches the page without tabbing through the header), a header with the environment, the
// navigation ("Errors", "Alerts", "Users", "Backups") and "Sign out", then the page. Readable without JavaScript or CSS; every value is
// escaped (html/html.ts). The stylesheet is static (static/console.css, served by static.ts); its
// colours meet WCAG 2.2 §1.4.3 contrast (4.5:1 for text).
import { html, htmlDocument, type Html } from '../../html/html.ts';
import { csrfField } from './components.ts';

export type Section = 'errors' | 'alerts' | 'users' | 'backups';

export interface LayoutOptions {
  title: string;
  /** The CSP nonce of this answer: the stylesheet link and the page's script carry it. */
  nonce: string;
  /** The stylesheet's address (its content hash in the name). */
  stylesheet: string;
  body: Html;
  /** Signed in: the header with navigation and "Sign out". */
  signedIn?: { envName: string; csrf: string; section?: Section | undefined };
  /** The page's own script (a constant of its page, never built from data), run after the page. */
  script?: Html;
}

const nav: [Section, string, string][] = [
  ['errors', 'Errors', '/console/errors'],
  ['alerts', 'Alerts', '/console/alerts'],
  ['users', 'Users', '/console/users'],
  ['backups', 'Backups', '/console/backups'],
];

function header(s: NonNullable<LayoutOptions['signedIn']>): Html {
  const links = nav.map(
    ([id, label, href]) => html`<a href="${href}"${s.section === id ? html` aria-current="page"` : ''}>${label}</a>`,
  );
  return html`<header>
<span class="brand">Cairn</span><span class="env">${s.envName}</span>
<nav aria-label="Console">${links}</nav>
<form method="post" action="/console/sign-out">${csrfField(s.csrf)}<button type="submit">Sign out</button></form>
</header>`;
}

export function layout(o: LayoutOptions): string {
  const s = o.signedIn;
  const script = o.script ? html`<script nonce="${o.nonce}">${o.script}</script>` : '';
  return htmlDocument({
    title: `${o.title} · Cairn console`,
    head: html`<link rel="stylesheet" href="${o.stylesheet}" nonce="${o.nonce}">`,
    // The skip link's target takes focus (tabindex=-1), so the next Tab goes on from the page.
    body: html`<a class="skip" href="#main">Skip to content</a>
${s ? header(s) : ''}<main id="main" tabindex="-1"${s ? '' : html` class="narrow"`}>${o.body}</main>${script}`,
  });
}

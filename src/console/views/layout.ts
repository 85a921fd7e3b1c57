// The console's page layout: "Skip to content" first (WCAG 2.2 §2.4.1 Bypass Blocks: a keyboard
// reaches the page without tabbing through the header), a header with the environment, the
// navigation ("Errors", "Alerts", "Users", "Backups") and "Sign out", then the page. Readable without JavaScript or CSS; every value is
// escaped (html/html.ts). The service's own pages outside the console (the landing page at `/` and
// the documents at /docs) wear the same look, with a header of their own: "Home", "Docs", "Console". The stylesheet is static (static/console.css, served by static.ts); its
// colours meet WCAG 2.2 §1.4.3 contrast (4.5:1 for text).
import { html, htmlDocument, type Html } from '../../html/html.ts';
import { csrfField } from './components.ts';

export type Section = 'errors' | 'alerts' | 'users' | 'backups';
/** A page of the service outside the console: the landing page, or the documents. */
export type SitePage = 'home' | 'docs';

export interface LayoutOptions {
  title: string;
  /** The CSP nonce of this answer: the stylesheet link and the page's script carry it. */
  nonce: string;
  /** The stylesheet's address (its content hash in the name). */
  stylesheet: string;
  body: Html;
  /** Signed in: the header with navigation and "Sign out". */
  signedIn?: { envName: string; csrf: string; section?: Section | undefined };
  /** A page outside the console: the site's header instead of the console's, and " · Cairn" titles. */
  site?: SitePage | undefined;
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

const siteNav: [SitePage | 'console', string, string][] = [
  ['home', 'Home', '/'],
  ['docs', 'Docs', '/docs'],
  ['console', 'Console', '/console'],
];

function siteHeader(current: SitePage): Html {
  const links = siteNav.map(
    ([id, label, href]) => html`<a href="${href}"${current === id ? html` aria-current="page"` : ''}>${label}</a>`,
  );
  return html`<header>
<span class="brand">Cairn</span>
<nav aria-label="Site">${links}</nav>
</header>`;
}

export function layout(o: LayoutOptions): string {
  const s = o.signedIn;
  const script = o.script ? html`<script nonce="${o.nonce}">${o.script}</script>` : '';
  const top = s ? header(s) : o.site ? siteHeader(o.site) : '';
  // Signed out, a console page is one narrow card (sign-in); so is the landing page. Documents are wide.
  const narrow = !s && o.site !== 'docs';
  return htmlDocument({
    title: `${o.title} · ${o.site ? 'Cairn' : 'Cairn console'}`,
    head: html`<link rel="stylesheet" href="${o.stylesheet}" nonce="${o.nonce}">`,
    // The skip link's target takes focus (tabindex=-1), so the next Tab goes on from the page.
    body: html`<a class="skip" href="#main">Skip to content</a>
${top}<main id="main" tabindex="-1"${narrow ? html` class="narrow"` : ''}>${o.body}</main>${script}`,
  });
}

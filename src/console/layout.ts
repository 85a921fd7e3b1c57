// The console's page layout: a header with the environment, the navigation ("Errors", "Users",
// "Backups") and "Sign out", then the page. Readable without JavaScript or CSS; every value is
// escaped (html/html.ts). Colours meet WCAG 2.2 §1.4.3 contrast (4.5:1 for text).
import { html, htmlDocument, Html } from '../html/html.ts';

export type Section = 'errors' | 'users' | 'backups';

export interface LayoutOptions {
  title: string;
  nonce: string;
  body: Html;
  /** Signed in: the header with navigation and "Sign out". */
  signedIn?: { envName: string; csrf: string; section?: Section };
  /** The page's own script (a constant of its page, never built from data), run after the page. */
  script?: string;
}

const css = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1b1f24}
header{background:#1b1f24;color:#fff;display:flex;align-items:center;gap:24px;padding:0 24px;min-height:56px;flex-wrap:wrap}
header .brand{font-weight:700;letter-spacing:.02em}
header .env{color:#c9ced4;font:13px ui-monospace,SFMono-Regular,Menlo,monospace}
header nav{display:flex;gap:4px;flex:1}
header nav a{color:#e4e7ea;text-decoration:none;padding:8px 12px;border-radius:6px}
header nav a[aria-current=page]{background:#3a4149;color:#fff}
header nav a:hover{background:#2c3238}
header form{margin:0}
header button{background:none;border:1px solid #8a9199;color:#fff;border-radius:6px;padding:6px 12px;font:inherit;cursor:pointer}
main{max-width:1120px;margin:0 auto;padding:24px}
main.narrow{max-width:420px;margin-top:10vh;background:#fff;border-radius:12px;box-shadow:0 8px 28px rgba(0,0,0,.08);padding:32px}
h1{font-size:24px;margin:0 0 16px}
a{color:#1d4fc4}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid #1d4fc4;outline-offset:2px}
label{display:block;font-weight:600;margin:12px 0 6px}
input[type=text],input[type=password],select{width:100%;padding:10px 12px;font:inherit;border:1px solid #8a9199;border-radius:8px;background:#fff;color:#1b1f24}
a.button{display:block;margin-top:10px;padding:10px;text-align:center;font-weight:600;border:1px solid #1d4fc4;border-radius:8px;color:#1d4fc4;background:#fff;text-decoration:none}
button.primary{display:block;width:100%;margin-top:18px;padding:11px;font:600 15px/1.2 inherit;border:0;border-radius:8px;background:#1d4fc4;color:#fff;cursor:pointer}
.alert{border-radius:8px;padding:10px 12px;margin:0 0 16px}
.alert.error{background:#fdecea;color:#8c1d18;border:1px solid #f3b8b3}
.alert.ok{background:#e8f5ec;color:#14532d;border:1px solid #b5dfc2}
.filters{display:flex;gap:6px;flex-wrap:wrap;margin:0 0 16px;padding:0;list-style:none}
.filters a{display:inline-block;padding:6px 12px;border-radius:999px;border:1px solid #c4c9cf;background:#fff;text-decoration:none;color:#1b1f24}
.filters a[aria-current=true]{background:#1b1f24;border-color:#1b1f24;color:#fff}
table{width:100%;border-collapse:collapse;background:#fff;border-radius:10px;overflow:hidden;box-shadow:0 1px 2px rgba(0,0,0,.06)}
th,td{text-align:left;padding:10px 12px;border-bottom:1px solid #e4e7ea;vertical-align:top}
th{font-size:13px;color:#4b5259;font-weight:600;background:#fafbfc}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.title{font-weight:600;overflow-wrap:anywhere}
.message{color:#4b5259;overflow-wrap:anywhere}
.muted{color:#5c636a;font-size:13px}
.pager{display:flex;justify-content:flex-end;margin-top:12px}
.empty{background:#fff;border-radius:10px;padding:32px;text-align:center;color:#4b5259}
h2{font-size:18px;margin:28px 0 10px}
h3{font-size:15px;margin:20px 0 8px}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace}
.chart{display:block}
.chart-frame{display:inline-block;margin:0}
.chart-frame figcaption{display:flex;justify-content:space-between;gap:12px;font-size:12px;color:#5c636a;margin-top:4px}
.actions{display:flex;gap:8px;align-items:center;flex-wrap:wrap;margin:12px 0}
.actions button{padding:8px 14px;font:600 14px/1.2 inherit;border-radius:8px;border:1px solid #1d4fc4;background:#fff;color:#1d4fc4;cursor:pointer}
.actions button:disabled{border-color:#c4c9cf;color:#5c636a;background:#f4f5f7;cursor:not-allowed}
.state{display:inline-block;padding:2px 10px;border-radius:999px;font-size:13px;font-weight:600;background:#e4e7ea;color:#1b1f24}
.state.unresolved{background:#fdecea;color:#8c1d18}
.state.resolved{background:#e8f5ec;color:#14532d}
.frames{list-style:none;margin:0;padding:0;background:#fff;border-radius:10px;box-shadow:0 1px 2px rgba(0,0,0,.06)}
.frame{padding:10px 12px;border-bottom:1px solid #e4e7ea;overflow-wrap:anywhere}
.frame:not(.app){color:#4b5259}
.frame details{margin-top:6px}
.frame p{margin:6px 0 0}
.tag{font-size:12px;border:1px solid #c4c9cf;border-radius:4px;padding:0 6px;color:#4b5259}
.code{margin:8px 0 0;padding:8px 0;background:#f6f8fa;border-radius:6px;overflow-x:auto}
.code>span{display:block;padding:0 12px;white-space:pre}
.code .hit{background:#fff3c4}
.state.succeeded{background:#e8f5ec;color:#14532d}
.state.failed{background:#fdecea;color:#8c1d18}
.restore{max-width:420px}
.restore button.danger{margin-top:12px;padding:8px 14px;font:600 14px/1.2 inherit;border:0;border-radius:8px;background:#b42318;color:#fff;cursor:pointer}
.restore button:disabled{background:#c4c9cf;color:#1b1f24;cursor:not-allowed}
summary{cursor:pointer;color:#1d4fc4}
progress{display:block;width:100%;max-width:480px;height:14px;margin:6px 0}
.inline{margin:0}
.inline button,.search button{padding:6px 12px;font:600 13px/1.2 inherit;border-radius:8px;border:1px solid #1d4fc4;background:#fff;color:#1d4fc4;cursor:pointer}
.inline button:disabled{border-color:#c4c9cf;color:#5c636a;background:#f4f5f7;cursor:not-allowed}
.search{display:flex;gap:8px;align-items:center;margin:0 0 16px;max-width:560px}
.search label{margin:0}
.search input{flex:1}
.state.active{background:#e8f5ec;color:#14532d}
.state.revoked{background:#fdecea;color:#8c1d18}
.code .ln{display:inline-block;min-width:3.5em;color:#5c636a;user-select:none}
`;

const nav: [Section, string, string][] = [
  ['errors', 'Errors', '/console/errors'],
  ['users', 'Users', '/console/users'],
  ['backups', 'Backups', '/console/backups'],
];

export function layout(o: LayoutOptions): string {
  const s = o.signedIn;
  const header = s
    ? html`<header>
<span class="brand">Cairn</span><span class="env">${s.envName}</span>
<nav aria-label="Console">${nav.map(
        ([id, label, href]) =>
          html`<a href="${href}"${s.section === id ? new Html(' aria-current="page"') : ''}>${label}</a>`,
      )}</nav>
<form method="post" action="/console/sign-out"><input type="hidden" name="csrf" value="${s.csrf}"><button type="submit">Sign out</button></form>
</header>`
    : html``;
  return htmlDocument({
    title: `${o.title} · Cairn console`,
    head: html`<style nonce="${o.nonce}">${new Html(css)}</style>`,
    body: html`${header}<main${s ? '' : new Html(' class="narrow"')}>${o.body}</main>${o.script ? html`<script nonce="${o.nonce}">${new Html(o.script)}</script>` : ''}`,
  });
}

// The Account Portal's page layout: one layout, branded per environment, readable without
// JavaScript or CSS. Every value is escaped (html/html.ts); colours come from validated settings and
// the button text colour is chosen for contrast (WCAG 2.2 §1.4.3: at least 4.5:1).
import type { IdentitySettings } from '../domain/identity/settings.ts';
import { html, htmlDocument, Html } from '../html/html.ts';

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

const contrast = (a: string, b: string) => {
  const [x, y] = [luminance(a), luminance(b)].sort((m, n) => n - m) as [number, number];
  return (x + 0.05) / (y + 0.05);
};

export interface Brand {
  name: string;
  logoUrl: string | null;
  primary: string;
  onPrimary: string;
  background: string;
  text: string;
}

export function brandOf(settings: IdentitySettings | undefined, fallbackName: string): Brand {
  const c = settings?.branding.colors ?? {};
  const primary = c.primary ?? '#2f5bd3';
  return {
    name: settings?.branding.name ?? fallbackName,
    logoUrl: settings?.branding.logo_url ?? null,
    primary,
    onPrimary: contrast(primary, '#ffffff') >= 4.5 ? '#ffffff' : '#111111',
    background: c.background ?? '#f4f5f7',
    text: c.text ?? '#1b1f24',
  };
}

const css = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--text);min-height:100vh;display:flex;flex-direction:column;align-items:center;justify-content:center;padding:24px}
main{width:100%;max-width:400px;background:#fff;color:#1b1f24;border-radius:14px;box-shadow:0 1px 2px rgba(0,0,0,.06),0 8px 28px rgba(0,0,0,.08);padding:32px}
.brand{display:flex;align-items:center;gap:10px;margin-bottom:20px;font-weight:600;font-size:15px;color:#3b4148}
.brand img{width:32px;height:32px;border-radius:8px;object-fit:contain}
.brand .mark{width:32px;height:32px;border-radius:8px;background:var(--primary);color:var(--on-primary);display:grid;place-items:center;font-weight:700}
h1{font-size:22px;line-height:1.3;margin:0 0 6px}
p.lead{margin:0 0 22px;color:#4b5259}
label{display:block;font-weight:600;font-size:14px;margin:14px 0 6px}
input[type=email],input[type=password],input[type=text]{width:100%;padding:11px 12px;font:inherit;border:1px solid #8a9199;border-radius:8px;background:#fff;color:#1b1f24}
input:focus-visible,button:focus-visible,a:focus-visible{outline:3px solid var(--primary);outline-offset:2px}
input[aria-invalid=true]{border-color:#b3261e}
.code{font:600 22px/1.2 ui-monospace,SFMono-Regular,Menlo,monospace;letter-spacing:.12em;text-transform:uppercase;text-align:center}
button,.button{display:block;width:100%;margin-top:20px;padding:12px;font-family:inherit;font-size:16px;font-weight:600;line-height:1.2;border:0;border-radius:8px;background:var(--primary);color:var(--on-primary);cursor:pointer;text-align:center;text-decoration:none}
button.secondary,.button.secondary{background:#fff;color:#1b1f24;border:1px solid #8a9199}
.row{display:flex;gap:12px}.row>*{flex:1}
.divider{display:flex;align-items:center;gap:12px;color:#5c636a;font-size:13px;margin:22px 0 4px}
.divider:before,.divider:after{content:"";flex:1;border-top:1px solid #d5d9de}
.social .button{margin-top:10px}
.alert{border-radius:8px;padding:10px 12px;margin:0 0 16px;font-size:14px}
.alert.error{background:#fdecea;color:#8c1d18;border:1px solid #f3b8b3}
.alert.ok{background:#e8f5ec;color:#14532d;border:1px solid #b5dfc2}
.hint{font-size:13px;color:#5c636a;margin-top:6px}
.client{border:1px solid #d5d9de;border-radius:10px;padding:14px 16px;margin:4px 0 6px}
.client strong{display:block;font-size:17px}
ul.scopes{margin:8px 0 0;padding-left:20px}
button.linklike{display:inline;width:auto;margin:0;padding:0;background:none;color:var(--primary);text-decoration:underline;font:inherit;border:0}
footer{margin-top:18px;font-size:13px;color:var(--text);opacity:.8}
footer a,main a{color:var(--primary)}
`;

export interface PageOptions {
  title: string;
  brand: Brand;
  nonce: string;
  body: Html;
  footer?: Html;
}

export function page(o: PageOptions): string {
  const b = o.brand;
  const vars = `:root{--primary:${b.primary};--on-primary:${b.onPrimary};--bg:${b.background};--text:${b.text}}`;
  const mark = b.logoUrl
    ? html`<img src="${b.logoUrl}" alt="">`
    : html`<span class="mark" aria-hidden="true">${b.name.slice(0, 1).toUpperCase()}</span>`;
  return htmlDocument({
    title: `${o.title} · ${b.name}`,
    head: html`<style nonce="${o.nonce}">${new Html(vars + css)}</style>`,
    body: html`<main>
<div class="brand">${mark}<span>${b.name}</span></div>
${o.body}
</main>${o.footer ? html`<footer>${o.footer}</footer>` : ''}`,
  });
}

/** An error summary announced by screen readers as soon as the page loads (role=alert). */
export const errorBox = (message: string | undefined): Html =>
  message ? html`<div class="alert error" role="alert" id="form-error">${message}</div>` : html``;

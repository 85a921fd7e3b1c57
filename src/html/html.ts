// HTML built on the server for the Account Portal and the console: a tagged template whose
// interpolations are escaped unless they are already Html, so no value reaches a page unescaped.

export const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Markup that is already safe: made by `html`, or a constant of ours (never data). */
export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
}

export type Part = string | number | Html | null | undefined | false | readonly Part[];

function render(p: Part): string {
  if (p === null || p === undefined || p === false) return '';
  if (p instanceof Html) return p.value;
  if (Array.isArray(p)) return p.map(render).join('');
  return esc(String(p));
}

export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  return new Html(strings.reduce((out, s, i) => out + s + (i < parts.length ? render(parts[i]) : ''), ''));
}

/** `<!doctype html>` and the head every page has (UTF-8, mobile viewport, no Referer), then `head` and `body`. */
export function htmlDocument(o: { title: string; head: Html; body: Html }): string {
  return `<!doctype html>${
    html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${o.title}</title>
${o.head}</head>
<body>${o.body}</body></html>`.value
  }`;
}

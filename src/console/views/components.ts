// The pieces every console page is made of: tables, the pager, filter chips, state badges, alerts,
// and forms that carry the page's CSRF token. Pure functions of their data (no request, no clock),
// so each page's view is golden-tested as it is (test/console/views.test.ts).
import { html, Html, type Part } from '../../html/html.ts';

/** The page's CSRF token, as every form carries it (http/csrf.ts). */
export const csrfField = (csrf: string): Html => html`<input type="hidden" name="csrf" value="${csrf}">`;

/** ` disabled` when the control may not be used. */
export const disabledIf = (off: boolean): Html | '' => (off ? html` disabled` : '');

/** An error is announced at once (role=alert); a notice politely (role=status). */
export const alert = (kind: 'error' | 'ok', message: Part): Html =>
  kind === 'error'
    ? html`<div class="alert error" role="alert">${message}</div>`
    : html`<div class="alert ok" role="status">${message}</div>`;

/** A state as a coloured badge (the stylesheet colours each state by its class). */
export const badge = (state: string): Html => html`<span class="state ${state}">${state}</span>`;

/** What a key without the write scope sees beside the controls it cannot use (`block`: a paragraph of its own). */
export function readOnlyNote(scope: string, block = false): Html {
  const note = `Read-only: the key this console was opened with lacks ${scope}.`;
  return block ? html`<p class="muted">${note}</p>` : html`<span class="muted">${note}</span>`;
}

export const empty = (message: Part): Html => html`<p class="empty">${message}</p>`;

/** Parts of a line of facts, ` · ` between them; an absent part (false, '') is left out. */
export function dotted(parts: readonly Part[]): Html {
  const shown = parts.filter((p) => p !== false && p !== '' && p !== null && p !== undefined);
  return html`${shown.map((p, i) => (i === 0 ? html`${p}` : html` · ${p}`))}`;
}

/** A table cell: its content, or its content and class (`num`, `message`). */
export type Cell = Part | { value: Part; className: string };

const isClassed = (c: Cell): c is { value: Part; className: string } =>
  typeof c === 'object' && c !== null && !(c instanceof Html) && !Array.isArray(c);

const td = (c: Cell): Html => (isClassed(c) ? html`<td class="${c.className}">${c.value}</td>` : html`<td>${c}</td>`);

export const tableRow = (cells: readonly Cell[]): Html => html`<tr>${cells.map(td)}</tr>`;

/** A column heading; `num` right-aligns numbers. */
export type Column = string | { label: string; num: true };

/**
 * A table; `className` styles it (`wrap`: long values break anywhere rather than widen the page).
 * `scroll` names a table too wide for a phone: it scrolls sideways in a box of its own (so the page
 * never does), a named region that takes focus so a keyboard can scroll it too (WCAG 2.1.1; axe's
 * scrollable-region-focusable).
 */
export function table(o: {
  caption?: Part;
  columns: readonly Column[];
  rows: readonly Html[];
  className?: string;
  scroll?: string;
}): Html {
  const th = (c: Column) =>
    typeof c === 'string' ? html`<th scope="col">${c}</th>` : html`<th scope="col" class="num">${c.label}</th>`;
  const caption = o.caption === undefined ? '' : html`<caption class="muted">${o.caption}</caption>`;
  const t = html`<table${o.className ? html` class="${o.className}"` : ''}>${caption}
<thead><tr>${o.columns.map(th)}</tr></thead>
<tbody>${o.rows}</tbody></table>`;
  return o.scroll === undefined
    ? t
    : html`<div class="table-scroll" role="region" aria-label="${o.scroll}" tabindex="0">${t}</div>`;
}

/** The link to the next (older) page, when there is one. */
export const pager = (next: string | undefined, label: string): Html | '' =>
  next ? html`<nav class="pager" aria-label="Pages"><a href="${next}">${label}</a></nav>` : '';

export interface Filter {
  label: string;
  href: string;
  current: boolean;
}

/** Filter chips: links, the chosen one marked for assistive technology (aria-current). */
export const filters = (name: string, items: readonly Filter[]): Html =>
  html`<ul class="filters" aria-label="${name}">${items.map(
    (f) => html`<li><a href="${f.href}"${f.current ? html` aria-current="true"` : ''}>${f.label}</a></li>`,
  )}</ul>`;

/** A form that posts to the console with the page's CSRF token. */
export const postForm = (o: { action: string; csrf: string; className?: string; body: Part }): Html =>
  html`<form method="post" action="${o.action}"${o.className ? html` class="${o.className}"` : ''}>
${csrfField(o.csrf)}
${o.body}
</form>`;

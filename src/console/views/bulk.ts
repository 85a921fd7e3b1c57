// Bulk triage on the errors page: a checkbox per row, named by the group's title, with the etag the
// page was rendered with beside it (a hidden input); "Resolve selected", "Acknowledge selected" and
// "Reopen selected" post them (pages/errors-bulk.ts), and the page comes back (303) saying what
// changed and naming, in an alert, the groups that changed since it was loaded and were left as
// they are. What happened travels in the redirect's query (ids and counts, never etags), so the page
// stays a plain GET that a reload shows again.
import type { GroupState } from '../../domain/errors/groups/queries.ts';
import { transitions, type TriageAction } from '../../domain/errors/groups/state.ts';
import { html, type Html } from '../../html/html.ts';
import { plural } from '../format.ts';
import { alert, disabledIf, postForm, readOnlyNote } from './components.ts';

/** The action, its button, and the word for what it did. */
export const bulkActions: readonly [TriageAction, string, string][] = [
  ['resolve', 'Resolve selected', 'Resolved'],
  ['acknowledge', 'Acknowledge selected', 'Acknowledged'],
  ['reopen', 'Reopen selected', 'Reopened'],
];

export interface BulkRow {
  id: string;
  title: string;
  state: GroupState;
  etag: string;
}

/** What the last bulk action did, as its redirect's query says it. */
export interface BulkOutcome {
  action: TriageAction;
  changed: number;
  /** Changed since the page was loaded (a stale etag): left as they are. */
  stale: string[];
  /** In a state the action does not apply to. */
  refused: string[];
  /** No longer in this environment (pruned since). */
  gone: number;
}

/** The outcome with the groups it names, as the page reads them now. */
export interface BulkReport extends Omit<BulkOutcome, 'stale' | 'refused'> {
  stale: readonly { id: string; title: string }[];
  refused: readonly { id: string; title: string; state: GroupState }[];
}

/** The query keys of an outcome: left out of the list's own query that the form returns to. */
export const outcomeKeys = ['done', 'changed', 'stale', 'refused', 'gone'] as const;

const ids = (v: string | null): string[] =>
  (v ?? '')
    .split(',')
    .filter((id) => /^eg_[0-9a-z]{26}$/.test(id))
    .slice(0, 100);
const count = (v: string | null): number => Math.min(Number.parseInt(v ?? '0', 10) || 0, 100);

export function outcomeQuery(o: BulkOutcome): [string, string][] {
  return [
    ['done', o.action],
    ['changed', String(o.changed)],
    ...(o.stale.length ? [['stale', o.stale.join(',')] as [string, string]] : []),
    ...(o.refused.length ? [['refused', o.refused.join(',')] as [string, string]] : []),
    ...(o.gone ? [['gone', String(o.gone)] as [string, string]] : []),
  ];
}

export function readOutcome(q: URLSearchParams): BulkOutcome | undefined {
  const action = bulkActions.find(([a]) => a === q.get('done'))?.[0];
  if (!action) return undefined;
  return {
    action,
    changed: count(q.get('changed')),
    stale: ids(q.get('stale')),
    refused: ids(q.get('refused')),
    gone: count(q.get('gone')),
  };
}

/** A row's checkbox, named by its title, and the etag the row was rendered with. */
export const selectCell = (g: BulkRow, writable: boolean): Html =>
  html`<input type="checkbox" name="group" value="${g.id}" aria-label="${g.title}"${disabledIf(!writable)}><input type="hidden" name="etag_${g.id}" value="${g.etag}">`;

/** The buttons, each disabled when no row of the page is in a state it applies to. */
function bulkButtons(rows: readonly BulkRow[], writable: boolean): Html {
  const buttons = bulkActions.map(([action, label]) => {
    const off = !writable || !rows.some((r) => transitions[action].from.includes(r.state));
    return html`<button type="submit" name="action" value="${action}"${disabledIf(off)}>${label}</button>`;
  });
  return html`<div class="actions" role="group" aria-label="Selected errors">${buttons}${
    writable ? '' : readOnlyNote('observability:write')
  }</div>`;
}

/** The list's table inside the form that posts its checked rows back to the same list. */
export const bulkForm = (o: {
  listQuery: string;
  csrf: string;
  rows: readonly BulkRow[];
  writable: boolean;
  table: Html;
}): Html =>
  postForm({
    action: `/console/errors/bulk${o.listQuery ? `?${o.listQuery}` : ''}`,
    csrf: o.csrf,
    body: html`${bulkButtons(o.rows, o.writable)}
${o.table}`,
  });

const named = (groups: readonly { id: string; title: string }[]): Html =>
  html`${groups.map((g, i) => html`${i ? ', ' : ''}<a href="/console/errors/${g.id}">${g.title}</a>`)}`;

/** What the last bulk action did: a notice of the changes, an alert naming what was left as it is. */
export function bulkReport(r: BulkReport | undefined): Html | '' {
  if (!r) return '';
  const [, , did] = bulkActions.find(([a]) => a === r.action)!;
  const problems: Html[] = [];
  if (r.stale.length)
    problems.push(
      html`<p>Changed since the page was loaded, so left as they are: ${named(r.stale)}. Review them and try again.</p>`,
    );
  if (r.refused.length)
    problems.push(html`<p>Not ${did.toLowerCase()}: ${named(r.refused)} (their state does not allow it).</p>`);
  if (r.gone) problems.push(html`<p>${plural(r.gone, 'error')} no longer in this environment.</p>`);
  if (r.changed === 0 && problems.length === 0) problems.push(html`<p>Select the errors to ${r.action} first.</p>`);
  return html`${r.changed ? alert('ok', `${did} ${plural(r.changed, 'error')}.`) : ''}${
    problems.length ? alert('error', html`${problems}`) : ''
  }`;
}

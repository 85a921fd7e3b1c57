// The backups page: "Back up now", then the latest backups, newest first (created, type, state,
// size), and per succeeded backup a "Restore" form: a target environment of the project and its
// full name typed again, as `heroku pg:backups:restore --confirm <app>` asks, so a restore is never
// one mistaken click. A refusal or a notice shows above.
import type { BackupRow } from '../../domain/backups/queries.ts';
import { html, type Html } from '../../html/html.ts';
import { bytes, timeTag } from '../format.ts';
import { alert, badge, disabledIf, empty, postForm, readOnlyNote, table } from './components.ts';

export type BackupsRow = Pick<BackupRow, 'id' | 'type' | 'state' | 'error' | 'size_bytes' | 'create_time'>;

export interface BackupsData {
  backups: readonly BackupsRow[];
  /** How many the page shows at most (its caption says so). */
  shown: number;
  /** The project's environments, a restore's possible targets. */
  envs: readonly string[];
  csrf: string;
  /** The key has backups:write. */
  writable: boolean;
  notice?: string | undefined;
  error?: string | undefined;
}

function restoreForm(b: BackupsRow, d: BackupsData): Html {
  const off = disabledIf(!d.writable);
  const form = postForm({
    action: `/console/backups/${b.id}/restore`,
    csrf: d.csrf,
    className: 'restore',
    body: html`<label for="target-${b.id}">Target environment</label>
<select id="target-${b.id}" name="target"${off}>${d.envs.map((e) => html`<option>${e}</option>`)}</select>
<label for="confirm-${b.id}">Type the target environment's full name to confirm</label>
<input id="confirm-${b.id}" name="confirm" type="text" autocomplete="off" spellcheck="false" required${off}>
<p class="muted">The target's database is replaced by this backup, after a backup of it is taken.</p>
<button type="submit" class="danger"${off}>Restore</button>`,
  });
  return html`<details><summary>Restore…</summary>${form}</details>`;
}

function backupRow(b: BackupsRow, d: BackupsData): Html {
  const error = b.error ? html`<div class="message">${b.error}</div>` : '';
  return html`<tr><td>${timeTag(b.create_time)}<div class="muted"><code>${b.id}</code></div></td>
<td>${b.type}</td><td>${badge(b.state)}${error}</td>
<td class="num">${bytes(b.size_bytes === null ? null : Number(b.size_bytes))}</td>
<td>${b.state === 'succeeded' ? restoreForm(b, d) : ''}</td></tr>`;
}

export function backupsView(d: BackupsData): Html {
  const list =
    d.backups.length === 0
      ? empty('No backups yet.')
      : table({
          caption: `The latest ${d.shown} backups, newest first`,
          scroll: 'Backups',
          columns: ['Created', 'Type', 'State', { label: 'Size', num: true }, 'Restore'],
          rows: d.backups.map((b) => backupRow(b, d)),
        });
  const backUpNow = postForm({
    action: '/console/backups',
    csrf: d.csrf,
    className: 'actions',
    body: html`<button type="submit"${disabledIf(!d.writable)}>Back up now</button>
${d.writable ? '' : readOnlyNote('backups:write')}`,
  });
  return html`<h1>Backups</h1>
${d.error ? alert('error', d.error) : ''}
${d.notice ? alert('ok', d.notice) : ''}
${backUpNow}
${list}`;
}

// A restore's (or drill's) progress until done: its phase, the bytes read of the backup, and how
// it ended (the pre-restore backup, or the error and whether the target was changed, which the
// worker writes: docs/api.md "Restores tell the truth"). Without JavaScript the page has a link to
// look again; with it, `liveProgress` (nonce'd: the CSP allows nothing else) fetches the page every
// second and swaps in its progress section until the operation is done.
import type { OperationRow } from '../../domain/backups/queries.ts';
import { html, Html } from '../../html/html.ts';
import { bytes, timeTag } from '../format.ts';
import { alert, badge } from './components.ts';

/** What each phase is, in words (domain/backups/restore.ts names them). */
const phases: Record<string, string> = {
  pre_restore_backup: 'Backing up the target before it is replaced',
  verifying: 'Checking the backup',
  restoring: 'Restoring',
  committing: 'Committing',
  done: 'Done',
};

/** Fetches this page each second and swaps in its progress section, until the operation is done. */
export const liveProgress = new Html(`(() => {
  const tick = async () => {
    const now = document.getElementById('progress');
    if (!now || now.dataset.done === 'true') return;
    try {
      const res = await fetch(location.href, { headers: { accept: 'text/html' }, credentials: 'same-origin' });
      const next = new DOMParser().parseFromString(await res.text(), 'text/html').getElementById('progress');
      if (next) now.replaceWith(next);
    } catch {}
    setTimeout(tick, 1000);
  };
  setTimeout(tick, 1000);
})();`);

export type OperationViewRow = Pick<
  OperationRow,
  | 'id'
  | 'kind'
  | 'backup_id'
  | 'pre_backup_id'
  | 'state'
  | 'phase'
  | 'bytes_read'
  | 'bytes_total'
  | 'error'
  | 'create_time'
>;

export interface OperationData {
  op: OperationViewRow;
  /** The target environment's name. */
  targetName: string;
}

export const isDone = (op: Pick<OperationRow, 'state'>): boolean => op.state === 'succeeded' || op.state === 'failed';

export const operationTitle = ({ op, targetName }: OperationData): string =>
  op.kind === 'restore'
    ? `Restore of ${op.backup_id ?? 'a backup'} into ${targetName}`
    : `Drill of ${op.backup_id ?? 'the latest backup'}`;

const selfRefresh = '(the page refreshes itself when JavaScript runs).';

function running(op: OperationViewRow): Html {
  const read = Number(op.bytes_read);
  const total = Number(op.bytes_total);
  const percent = total > 0 ? Math.floor((100 * read) / total) : 0;
  const value = Math.min(read, total);
  const label = html`<label for="bytes">${bytes(read)} of ${bytes(total)}</label>`;
  const bar =
    total > 0 ? html`${label}<progress id="bytes" max="${total}" value="${value}">${percent}%</progress>` : '';
  return html`<p>${phases[op.phase ?? ''] ?? 'Waiting for a worker'}…</p>
${bar}
<p class="muted"><a href="/console/operations/${op.id}">Refresh</a> ${selfRefresh}</p>`;
}

function outcome({ op, targetName }: OperationData): Html {
  if (op.state === 'succeeded') {
    const kept = op.pre_backup_id
      ? html` The target as it was is kept as backup <code>${op.pre_backup_id}</code>.`
      : '';
    return alert('ok', html`Restored ${op.backup_id} into ${targetName}.${kept}`);
  }
  if (op.state === 'failed') return alert('error', op.error?.message ?? 'The operation failed.');
  return running(op);
}

export function operationView(d: OperationData): Html {
  return html`<p><a href="/console/backups">← Backups</a></p>
<h1>${operationTitle(d)}</h1>
<section id="progress" data-done="${String(isDone(d.op))}" aria-live="polite">
<p>${badge(d.op.state)} · started ${timeTag(d.op.create_time)}</p>
${outcome(d)}
</section>`;
}

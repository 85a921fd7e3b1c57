// /console/operations/{id}: a restore's (or drill's) progress until done: its phase, the bytes read
// of the backup, and how it ended (the pre-restore backup, or the error and whether the target was
// changed, which the worker writes: docs/api.md "Restores tell the truth"). Without JavaScript the
// page has a link to look again; with it, a small script of the page's own (nonce'd: CSP allows
// nothing else) fetches the page every second and swaps in its progress until the operation is done.
import { z } from 'zod';
import { getOperation } from '../../domain/backups/service.ts';
import { AppError } from '../../app-error.ts';
import { defineRoute } from '../../http/route.ts';
import { html } from '../../html/html.ts';
import { render, sessionWith } from '../context.ts';
import { bytes, timeTag } from '../format.ts';
import { consolePage } from '../page.ts';

const operationId = /^op_[0-9a-z]{26}$/;

/** What each phase is, in words (domain/backups/restore.ts names them). */
const phases: Record<string, string> = {
  pre_restore_backup: 'Backing up the target before it is replaced',
  verifying: 'Checking the backup',
  restoring: 'Restoring',
  committing: 'Committing',
  done: 'Done',
};

/** Fetches this page each second and swaps in its progress section, until the operation is done. */
const liveProgress = `(() => {
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
})();`;

export const consoleOperation = defineRoute({
  ...consolePage,
  method: 'get',
  path: '/console/operations/{id}',
  operationId: 'consoleOperation',
  summary: "A restore's progress",
  params: z.object({ id: z.string().max(64) }),
  async handle({ params, deps, ctx }) {
    const session = await sessionWith(ctx, deps, 'backups:read');
    if (!session) return undefined;
    if (!operationId.test(params.id)) throw new AppError('not_found', 'There is no such operation.');
    const { op, targetName } = await getOperation(deps.db, session.envId, params.id);
    const done = op.state === 'succeeded' || op.state === 'failed';
    const read = Number(op.bytes_read);
    const total = Number(op.bytes_total);
    const what =
      op.kind === 'restore'
        ? `Restore of ${op.backup_id ?? 'a backup'} into ${targetName}`
        : `Drill of ${op.backup_id ?? 'the latest backup'}`;
    render(ctx, deps, {
      title: what,
      session,
      section: 'backups',
      ...(done ? {} : { script: liveProgress }),
      body: html`<p><a href="/console/backups">← Backups</a></p>
<h1>${what}</h1>
<section id="progress" data-done="${String(done)}" aria-live="polite">
<p><span class="state ${op.state}">${op.state}</span> · started ${timeTag(op.create_time)}</p>
${
  op.state === 'succeeded'
    ? html`<div class="alert ok" role="status">Restored ${op.backup_id} into ${targetName}.${op.pre_backup_id ? html` The target as it was is kept as backup <code>${op.pre_backup_id}</code>.` : ''}</div>`
    : op.state === 'failed'
      ? html`<div class="alert error" role="alert">${op.error?.message ?? 'The operation failed.'}</div>`
      : html`<p>${phases[op.phase ?? ''] ?? 'Waiting for a worker'}…</p>
${total > 0 ? html`<label for="bytes">${bytes(read)} of ${bytes(total)}</label><progress id="bytes" max="${total}" value="${Math.min(read, total)}">${Math.floor((100 * read) / total)}%</progress>` : ''}
<p class="muted"><a href="/console/operations/${op.id}">Refresh</a> (the page refreshes itself when JavaScript runs).</p>`
}
</section>`,
    });
    return undefined;
  },
});

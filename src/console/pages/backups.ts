// /console/backups: the environment's backups, newest first (state, type, size, created), "Back up
// now", and per succeeded backup a "Restore" form: a target environment of the project and its full
// name typed again, as `heroku pg:backups:restore --confirm <app>` asks, so a restore is never one
// mistaken click. A restore leads to its operation's page (operation.ts). The checks and the work
// are the API's own (domain/backups/service.ts); a refusal comes back on this page, saying why.
import type { Context } from 'koa';
import { z } from 'zod';
import type { ConsoleSession } from '../../domain/console/sessions.ts';
import { backupQueries, type BackupRow } from '../../domain/backups/queries.ts';
import { requestManualBackup, requestRestore } from '../../domain/backups/service.ts';
import { AppError } from '../../app-error.ts';
import type { AppDeps } from '../../http/context.ts';
import { csrfToken } from '../../http/csrf.ts';
import { defineRoute } from '../../http/route.ts';
import { html, type Html } from '../../html/html.ts';
import { form, seeOther, text } from '../../html/page-route.ts';
import { can, postWith, render, sessionWith } from '../context.ts';
import { bytes, timeTag } from '../format.ts';
import { consolePage } from '../page.ts';

const pageSize = 50;
const backupId = /^backup_[0-9a-z]{26}$/;

function restoreForm(ctx: Context, deps: AppDeps, b: BackupRow, envs: string[], writable: boolean): Html {
  const off = writable ? '' : html` disabled`;
  return html`<details><summary>Restore…</summary>
<form method="post" action="/console/backups/${b.id}/restore" class="restore">
<input type="hidden" name="csrf" value="${csrfToken(ctx, deps.config)}">
<label for="target-${b.id}">Target environment</label>
<select id="target-${b.id}" name="target"${off}>${envs.map((e) => html`<option>${e}</option>`)}</select>
<label for="confirm-${b.id}">Type the target environment's full name to confirm</label>
<input id="confirm-${b.id}" name="confirm" type="text" autocomplete="off" spellcheck="false" required${off}>
<p class="muted">The target's database is replaced by this backup, after a backup of it is taken.</p>
<button type="submit" class="danger"${off}>Restore</button>
</form></details>`;
}

async function showBackups(
  ctx: Context,
  deps: AppDeps,
  session: ConsoleSession,
  o: { notice?: string; error?: string; status?: number } = {},
): Promise<undefined> {
  const q = backupQueries(deps.db);
  const [backups, envs] = await Promise.all([q.listBackups(session.envId, pageSize), q.projectEnvNames(session.envId)]);
  const writable = can(session, 'backups:write');
  render(ctx, deps, {
    title: 'Backups',
    session,
    section: 'backups',
    status: o.status,
    body: html`<h1>Backups</h1>
${o.error ? html`<div class="alert error" role="alert">${o.error}</div>` : ''}
${o.notice ? html`<div class="alert ok" role="status">${o.notice}</div>` : ''}
<form method="post" action="/console/backups" class="actions">
<input type="hidden" name="csrf" value="${csrfToken(ctx, deps.config)}">
<button type="submit"${writable ? '' : html` disabled`}>Back up now</button>
${writable ? '' : html`<span class="muted">Read-only: the key this console was opened with lacks backups:write.</span>`}
</form>
${
  backups.length === 0
    ? html`<p class="empty">No backups yet.</p>`
    : html`<table><caption class="muted">The latest ${pageSize} backups, newest first</caption>
<thead><tr><th scope="col">Created</th><th scope="col">Type</th><th scope="col">State</th><th scope="col" class="num">Size</th><th scope="col">Restore</th></tr></thead>
<tbody>${backups.map(
        (b) => html`<tr><td>${timeTag(b.create_time)}<div class="muted"><code>${b.id}</code></div></td>
<td>${b.type}</td><td><span class="state ${b.state}">${b.state}</span>${b.error ? html`<div class="message">${b.error}</div>` : ''}</td>
<td class="num">${bytes(b.size_bytes === null ? null : Number(b.size_bytes))}</td>
<td>${b.state === 'succeeded' ? restoreForm(ctx, deps, b, envs, writable) : ''}</td></tr>`,
      )}</tbody></table>`
}`,
  });
  return undefined;
}

export const consoleBackups = defineRoute({
  ...consolePage,
  method: 'get',
  path: '/console/backups',
  operationId: 'consoleBackups',
  summary: "The environment's backups, Back up now, and Restore",
  query: z.looseObject({ started: text(64) }),
  async handle({ query, deps, ctx }) {
    const session = await sessionWith(ctx, deps, 'backups:read');
    if (!session) return undefined;
    const started = query.started && backupId.test(query.started) ? query.started : undefined;
    return showBackups(ctx, deps, session, started ? { notice: `Backup ${started} started; it runs below.` } : {});
  },
});

/** A refusal of the domain (conflict, forbidden, not found) shown on the page; anything else is the error page's. */
async function orRefused(
  ctx: Context,
  deps: AppDeps,
  session: ConsoleSession,
  run: () => Promise<undefined>,
): Promise<undefined> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500 || err.code === 'unauthorized') throw err;
    return showBackups(ctx, deps, session, { error: err.message, status: err.status });
  }
}

export const consoleBackUpNow = defineRoute({
  ...consolePage,
  method: 'post',
  path: '/console/backups',
  operationId: 'consoleBackUpNow',
  summary: 'Take a manual backup now',
  body: form('csrf'),
  response: { ...consolePage.response, status: 303, type: 'redirect', description: 'To the backups page' },
  async handle({ body: f, deps, ctx }) {
    const session = await postWith(ctx, deps, f.csrf, 'backups:write');
    if (!session) return undefined;
    return orRefused(ctx, deps, session, async () => {
      const b = await requestManualBackup(deps, session.envId);
      return seeOther(ctx, `/console/backups?started=${b.id}`);
    });
  },
});

export const consoleRestore = defineRoute({
  ...consolePage,
  method: 'post',
  path: '/console/backups/{id}/restore',
  operationId: 'consoleRestore',
  summary: 'Restore a backup into an environment whose full name was typed to confirm',
  params: z.object({ id: z.string().max(64) }),
  body: form('csrf', 'target', 'confirm'),
  response: { ...consolePage.response, status: 303, type: 'redirect', description: "To the restore's progress" },
  async handle({ params, body: f, deps, ctx }) {
    const session = await postWith(ctx, deps, f.csrf, 'backups:write');
    if (!session) return undefined;
    const target = f.target ?? '';
    if (!target || f.confirm !== target)
      return showBackups(ctx, deps, session, {
        status: 400,
        error: `The confirmation does not match the target environment ${target || '(none chosen)'}: type its full name exactly. Nothing was restored.`,
      });
    return orRefused(ctx, deps, session, async () => {
      const { op } = await requestRestore(deps, session.envId, params.id, target);
      return seeOther(ctx, `/console/operations/${op.id}`);
    });
  },
});

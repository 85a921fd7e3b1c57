// /console/backups: the environment's backups, "Back up now" and "Restore" (views/backups.ts). A
// restore leads to its operation's page (operation.ts). The checks and the work are the API's own
// (domain/backups/capture/request.ts, restore/request.ts); a refusal comes back on this page, saying why.
import type { Context } from 'koa';
import { z } from 'zod';
import { backupQueries } from '../../domain/backups/queries.ts';
import { requestManualBackup } from '../../domain/backups/capture/request.ts';
import { requestRestore } from '../../domain/backups/restore/request.ts';
import { AppError } from '../../app-error.ts';
import { form, seeOther, text } from '../../html/page-route.ts';
import type { AppDeps } from '../../http/context.ts';
import { defineRoute, type ConsolePrincipal } from '../../http/route.ts';
import { consolePage, csrfExample } from '../page.ts';
import { consolePageSize } from '../paging.ts';
import { renderSection } from '../render.ts';
import { backupsView } from '../views/backups.ts';

const backupId = /^backup_[0-9a-z]{26}$/;

interface Outcome {
  notice?: string;
  error?: string;
  status?: number;
}

/** Loads the latest backups and the project's environments, and answers the page. */
async function showBackups(ctx: Context, deps: AppDeps, principal: ConsolePrincipal, o: Outcome = {}) {
  const q = backupQueries(deps.db);
  const [backups, envs] = await Promise.all([
    q.listBackups(principal.envId, consolePageSize),
    q.projectEnvNames(principal.envId),
  ]);
  const page = { title: 'Backups', section: 'backups', status: o.status } as const;
  return renderSection(ctx, deps, principal, page, (forms) =>
    backupsView({ backups, shown: consolePageSize, envs, ...forms, notice: o.notice, error: o.error }),
  );
}

export const consoleBackups = defineRoute({
  ...consolePage,
  method: 'get',
  path: '/console/backups',
  operationId: 'consoleBackups',
  summary: "The environment's backups, Back up now, and Restore",
  scope: 'backups:read',
  query: z.looseObject({ started: text(64) }),
  async handle({ query, principal, deps, ctx }) {
    const started = query.started && backupId.test(query.started) ? query.started : undefined;
    return showBackups(ctx, deps, principal, started ? { notice: `Backup ${started} started; it runs below.` } : {});
  },
});

/** A refusal of the domain (conflict, forbidden, not found) shown on the page; anything else is the error page's. */
async function orRefused(
  ctx: Context,
  deps: AppDeps,
  principal: ConsolePrincipal,
  run: () => Promise<undefined>,
): Promise<undefined> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500 || err.code === 'unauthorized') throw err;
    return showBackups(ctx, deps, principal, { error: err.message, status: err.status });
  }
}

export const consoleBackUpNow = defineRoute({
  ...consolePage,
  method: 'post',
  path: '/console/backups',
  operationId: 'consoleBackUpNow',
  summary: 'Take a manual backup now',
  scope: 'backups:write',
  csrf: true,
  body: form('csrf'),
  example: { csrf: csrfExample },
  response: { ...consolePage.response, status: 303, type: 'redirect', description: 'To the backups page' },
  async handle({ principal, deps, ctx }) {
    return orRefused(ctx, deps, principal, async () => {
      const b = await requestManualBackup(deps, principal.envId);
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
  scope: 'backups:write',
  csrf: true,
  params: z.object({ id: z.string().max(64) }),
  body: form('csrf', 'target', 'confirm'),
  example: {
    csrf: csrfExample,
    target: 'orgs/acme/projects/shop/envs/staging',
    confirm: 'orgs/acme/projects/shop/envs/staging',
  },
  response: { ...consolePage.response, status: 303, type: 'redirect', description: "To the restore's progress" },
  async handle({ params, body: f, principal, deps, ctx }) {
    const target = f.target ?? '';
    if (!target || f.confirm !== target)
      return showBackups(ctx, deps, principal, {
        status: 400,
        error:
          `The confirmation does not match the target environment ${target || '(none chosen)'}: ` +
          'type its full name exactly. Nothing was restored.',
      });
    return orRefused(ctx, deps, principal, async () => {
      const { op } = await requestRestore(deps, principal.envId, params.id, target);
      return seeOther(ctx, `/console/operations/${op.id}`);
    });
  },
});

// `cairn backups create|list|get|info|url|delete|usage`: backups themselves.
import type { Command } from 'commander';
import type { BackupsApi } from '../../../sdk/backups.ts';
import { CliError, type CliContext } from '../../context.ts';
import { progressBar } from '../../progress.ts';
import { backupInfo, describeBackup } from './describe.ts';

export type Api = () => BackupsApi;

export function createCommand(backups: Command, ctx: CliContext, api: Api): void {
  backups
    .command('create')
    .description('take a manual backup (free up to 10 a day, then billable)')
    .option('--env <name>', 'environment (default CAIRN_ENV)')
    .option('--no-wait', 'return at once')
    .option('--json', 'print JSON')
    .action(async (opts: { env?: string; wait: boolean; json?: boolean }) => {
      const created = await api().create(ctx.envName(opts.env));
      if (created.billable) ctx.progress('note: more than 10 manual backups today; this one is billable');
      // The bytes written so far (gzip, encrypted) and the rate; the total is known only at the end.
      const bar = progressBar(`backup ${created.id}`, process.stderr, { plain: Boolean(opts.json) });
      let last = '';
      const done = opts.wait
        ? await api().waitForBackup(created.id, (b) => {
            if (b.state === 'running' && b.progress_bytes !== undefined) bar(b.progress_bytes, undefined);
            else if (b.state !== last) ctx.progress(`${b.id}: ${b.state}`);
            last = b.state;
          })
        : created;
      if (process.stderr.isTTY && !opts.json && opts.wait) process.stderr.write('\n');
      ctx.print(done, Boolean(opts.json), describeBackup);
      if (done.state === 'failed') throw new CliError(`backup failed: ${done.error ?? 'unknown'}`);
    });
}

export function listCommand(backups: Command, ctx: CliContext, api: Api): void {
  backups
    .command('list')
    .description('backups, newest first')
    .option('--env <name>', 'environment')
    .option('--page-size <n>', 'items', '50')
    .option('--json', 'print JSON')
    .action(async (opts: { env?: string; pageSize: string; json?: boolean }) => {
      const page = await api().list(ctx.envName(opts.env), { pageSize: Number(opts.pageSize) });
      ctx.print(page, Boolean(opts.json), (p: typeof page) => p.backups.map(describeBackup).join('\n') || 'no backups');
    });
}

export function getCommand(backups: Command, ctx: CliContext, api: Api): void {
  backups
    .command('get')
    .argument('<id>', 'backup_…')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) =>
      ctx.print(await api().get(id), Boolean(opts.json), describeBackup),
    );
}

export function infoCommand(backups: Command, ctx: CliContext, api: Api): void {
  backups
    .command('info')
    .description('everything about one backup: sizes, versions, encryption, timings, the last drill')
    .argument('<id>', 'backup_…')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) =>
      ctx.print(await api().get(id), Boolean(opts.json), backupInfo),
    );
}

export function urlCommand(backups: Command, ctx: CliContext, api: Api): void {
  backups
    .command('url')
    .description('an expiring link to the decrypted .sql.gz that needs no key (curl it, hand it to CI)')
    .argument('<id>', 'backup_…')
    .option('--expires-in <seconds>', 'how long it works (60 to 86400)', (v) => Number(v), 3600)
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { expiresIn: number; json?: boolean }) => {
      const link = await api().url(id, opts.expiresIn);
      ctx.print(
        link,
        Boolean(opts.json),
        (l: typeof link) => `${l.url}\n(works until ${l.expire_time}; anyone with it can download the backup)`,
      );
    });
}

export function deleteCommand(backups: Command, ctx: CliContext, api: Api): void {
  backups
    .command('delete')
    .description('delete a backup that has ended, and its stored object (cannot be undone)')
    .argument('<id>', 'backup_…')
    .option('--confirm', 'say yes: the backup cannot be recovered afterwards')
    .action(async (id: string, opts: { confirm?: boolean }) => {
      if (!opts.confirm) throw new CliError(`deleting ${id} cannot be undone; run again with --confirm to delete it`);
      await api().delete(id);
      ctx.progress(`deleted ${id}`);
    });
}

export function usageCommand(backups: Command, ctx: CliContext, api: Api): void {
  backups
    .command('usage')
    .description('manual backups today, free left, stored GB and the monthly estimate')
    .option('--env <name>', 'environment')
    .option('--json', 'print JSON')
    .action(async (opts: { env?: string; json?: boolean }) => {
      const u = await api().usage(ctx.envName(opts.env));
      ctx.print(
        u,
        Boolean(opts.json),
        (x: typeof u) =>
          `${x.date}: ${x.manual_today} manual (${x.free_left} free left, ${x.billable_today} billable); stored ${x.stored_gb} GB ≈ ${x.monthly_estimate_usd} USD/month`,
      );
    });
}

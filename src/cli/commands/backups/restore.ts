// `cairn backups drill|restore`: operations that replay a backup, with their progress.
import type { Command } from 'commander';
import type { Operation } from '../../../sdk/backups.ts';
import { CliError, type CliContext } from '../../context.ts';
import { mib, progressBar } from '../../progress.ts';
import type { Api } from './backups.ts';
import { describeReplaced, leftOut } from './describe.ts';

export function drillCommand(backups: Command, ctx: CliContext, api: Api): void {
  backups
    .command('drill')
    .description('restore the latest backup into a scratch database and compare every table with it (a restore drill)')
    .option('--env <name>', 'environment (default CAIRN_ENV)')
    .option('--json', 'print JSON')
    .action(async (opts: { env?: string; json?: boolean }) => {
      const env = ctx.envName(opts.env);
      const op = await api().drill(env);
      ctx.progress(`drilling ${op.metadata.backup_id ?? '?'} of ${env} in a scratch database…`);
      const bars = new Map<string, ReturnType<typeof progressBar>>();
      const final = await api().waitForOperation(op.name, (o: Operation) => {
        const phase = o.metadata.phase ?? o.metadata.state;
        if ((phase === 'verifying' || phase === 'restoring') && o.metadata.bytes_total > 0) {
          if (!bars.has(phase)) bars.set(phase, progressBar(phase, process.stderr, { plain: Boolean(opts.json) }));
          bars.get(phase)!(o.metadata.bytes_read, o.metadata.bytes_total);
        } else if (phase === 'comparing' && !bars.has(phase)) {
          bars.set(phase, () => undefined);
          ctx.progress('comparing every table with the backup…');
        }
      });
      const verdict = final.response?.verification;
      ctx.print(final, Boolean(opts.json), (o: Operation) =>
        o.error
          ? `drill failed to run: ${o.error.message}`
          : `drill of ${o.metadata.backup_id ?? '?'} ${verdict?.result ?? '?'}${verdict?.reason ? `: ${verdict.reason}` : ''}`,
      );
      if (final.error) throw new CliError(final.error.message);
      if (verdict?.result === 'failed') throw new CliError(`the drill failed: ${verdict.reason ?? 'no reason given'}`);
    });
}

export function restoreCommand(backups: Command, ctx: CliContext, api: Api): void {
  backups
    .command('restore')
    .description("replace an environment's database with a backup (a pre-restore backup is taken first)")
    .argument('<id>', 'backup_…')
    .option('--env <name>', 'target environment')
    .option('--confirm', 'really replace the target database')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { env?: string; confirm?: boolean; json?: boolean }) => {
      const target = ctx.envName(opts.env);
      // The restore's own checks run first (an unknown target, no database, one already running),
      // so the plan printed is one that --confirm would really carry out.
      const plan = await api().previewRestore(id, target);
      const b = plan.backup;
      ctx.progress(
        `This replaces the database of ${target} (${plan.target_mode}) with backup ${b.id}\n  taken ${b.create_time} (${b.type}, ${mib(b.size_bytes)}, PostgreSQL ${b.pg_version ?? '?'})\n${describeReplaced(plan)}\nA pre-restore backup of ${target} is taken first; the restore itself cannot be undone.`,
      );
      if (!opts.confirm) throw new CliError('not restored: run again with --confirm to replace the database');
      const op = await api().restore(id, target);
      const bars = new Map<string, ReturnType<typeof progressBar>>();
      const final = await api().waitForOperation(op.name, (o: Operation) => {
        const phase = o.metadata.phase ?? o.metadata.state;
        if (phase === 'verifying' || phase === 'restoring') {
          if (!bars.has(phase)) bars.set(phase, progressBar(phase, process.stderr, { plain: Boolean(opts.json) }));
          bars.get(phase)!(o.metadata.bytes_read, o.metadata.bytes_total);
        }
      });
      ctx.print(final, Boolean(opts.json), (o: Operation) =>
        o.error
          ? `restore failed: ${o.error.message}`
          : `restored ${id} into ${target} (pre-restore backup ${o.metadata.pre_restore_backup_id})${leftOut(o)}`,
      );
      if (final.error) throw new CliError(final.error.message);
    });
}

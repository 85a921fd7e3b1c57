// `cairn backups schedules|schedule|unschedule`: when backups are taken.
import type { Command } from 'commander';
import type { CliContext } from '../../context.ts';
import type { Api } from './backups.ts';
import { describeSchedule, scheduleHour } from './describe.ts';

export function schedulesCommand(backups: Command, ctx: CliContext, api: Api): void {
  backups
    .command('schedules')
    .description("the environment's backup schedule and retention")
    .option('--env <name>', 'environment')
    .option('--json', 'print JSON')
    .action(async (opts: { env?: string; json?: boolean }) =>
      ctx.print(await api().settings(ctx.envName(opts.env)), Boolean(opts.json), describeSchedule),
    );
}

export function scheduleCommand(backups: Command, ctx: CliContext, api: Api): void {
  backups
    .command('schedule')
    .description('back up every day at an hour (UTC), weekly on Sundays and monthly on the 1st at the same hour')
    .requiredOption('--at <time>', 'a whole hour in UTC: "02:00 UTC", "02:00" or "2"', scheduleHour)
    .option('--env <name>', 'environment')
    .option('--json', 'print JSON')
    .action(async (opts: { at: number; env?: string; json?: boolean }) => {
      const env = ctx.envName(opts.env);
      const current = await api().settings(env);
      const saved = await api().saveSettings(env, {
        schedule_enabled: true,
        schedule_hour_utc: opts.at,
        retention_days: current.retention_days,
      });
      ctx.print(saved, Boolean(opts.json), describeSchedule);
    });
}

export function unscheduleCommand(backups: Command, ctx: CliContext, api: Api): void {
  backups
    .command('unschedule')
    .description('stop the scheduled backups (the existing backups stay until they expire)')
    .option('--env <name>', 'environment')
    .option('--json', 'print JSON')
    .action(async (opts: { env?: string; json?: boolean }) => {
      const env = ctx.envName(opts.env);
      const current = await api().settings(env);
      const saved = await api().saveSettings(env, { schedule_enabled: false, retention_days: current.retention_days });
      ctx.print(saved, Boolean(opts.json), describeSchedule);
    });
}

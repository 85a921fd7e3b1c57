// `cairn backups schedules|schedule|unschedule|settings`: when backups are taken, and drilled.
import type { Command } from 'commander';
import { CliError, type CliContext } from '../../context.ts';
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

type Drills = 'off' | 'daily' | 'weekly';

const drillsOption = (value: string): Drills => {
  if (value !== 'off' && value !== 'daily' && value !== 'weekly')
    throw new CliError('--drills is off, daily or weekly');
  return value;
};

export function settingsCommand(backups: Command, ctx: CliContext, api: Api): void {
  backups
    .command('settings')
    .description(
      "show the environment's backup settings, or change its restore drills (a drill restores the latest backup into a scratch database, which needs CREATEDB)",
    )
    .option('--drills <schedule>', 'restore drills: off, daily or weekly', drillsOption)
    .option('--env <name>', 'environment')
    .option('--json', 'print JSON')
    .action(async (opts: { drills?: Drills; env?: string; json?: boolean }) => {
      const env = ctx.envName(opts.env);
      const current = await api().settings(env);
      // PUT replaces schedule and retention, so the current ones are sent back unchanged.
      const shown = opts.drills
        ? await api().saveSettings(env, {
            schedule_enabled: current.schedule_enabled,
            retention_days: current.retention_days,
            drill_schedule: opts.drills,
          })
        : current;
      ctx.print(shown, Boolean(opts.json), describeSchedule);
    });
}

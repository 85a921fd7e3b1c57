// `cairn backups …` and `cairn storage …`, over the HTTP API through the SDK.
// Progress bars go to stderr, so --json output on stdout stays clean.
import type { Command } from 'commander';
import { BackupsApi } from '../../../sdk/backups.ts';
import type { CliContext, Register } from '../../context.ts';
import {
  createCommand,
  deleteCommand,
  getCommand,
  infoCommand,
  listCommand,
  urlCommand,
  usageCommand,
} from './backups.ts';
import { decryptCommand, downloadCommand } from './files.ts';
import { drillCommand, restoreCommand } from './restore.ts';
import { scheduleCommand, schedulesCommand, settingsCommand, unscheduleCommand } from './schedule.ts';
import { registerStorage } from './storage.ts';

function registerBackups(program: Command, ctx: CliContext): void {
  const api = () => new BackupsApi(ctx.client());
  const backups = program.command('backups').description('database backups of an environment');
  for (const add of [
    createCommand,
    listCommand,
    getCommand,
    infoCommand,
    schedulesCommand,
    scheduleCommand,
    unscheduleCommand,
    settingsCommand,
    decryptCommand,
    urlCommand,
    deleteCommand,
    usageCommand,
    downloadCommand,
    drillCommand,
    restoreCommand,
  ])
    add(backups, ctx, api);
}

export const register: Register = (program, ctx) => {
  registerBackups(program, ctx);
  registerStorage(program, ctx);
};

// `cairn end-users …` and `cairn sessions list|revoke` over the HTTP API (docs/api.md "The
// operator CLI").
import { EndUsersApi, type EndUser, type Session } from '../../sdk/end-users.ts';
import type { Command } from 'commander';
import type { CliContext, Register } from '../context.ts';
import { collectionCommands, pageSize, type EnvFlags, type ListRequest } from '../resource-commands.ts';

const userLine = (u: EndUser) =>
  `${u.id}  ${u.email}${u.email_verified ? '' : ' (unverified)'}${u.totp_enabled ? ' [totp]' : ''}${u.locked ? ' [locked]' : ''}`;
const sessionLine = (s: Session) =>
  `${s.id}  ${s.state.padEnd(7)} ${s.method.padEnd(8)} last active ${s.last_active_time}  ${s.ip ?? ''}`;

function registerUserCommands(users: Command, ctx: CliContext, api: () => EndUsersApi): void {
  const endUsers = collectionCommands(users, ctx, api, ['<id>', 'eu_…']);
  endUsers.list({
    description: 'list end users, newest first',
    envHelp: 'environment name (default: CAIRN_ENV)',
    filters: (c) =>
      c
        .option('--email <email>', 'only this address')
        .option('--email-contains <text>', 'addresses containing this text, any case'),
    fetch: (a, { env, page, flags }: ListRequest<EnvFlags & { email?: string; emailContains?: string }>) =>
      a.list(env, { email: flags.email, emailContains: flags.emailContains, ...page }),
    lines: (p) => p.end_users.map(userLine),
    empty: 'no end users',
  });
  endUsers.get('show one end user', userLine);

  users
    .command('create')
    .description('create an end user (the password, if any, is read from CAIRN_END_USER_PASSWORD)')
    .requiredOption('--email <email>', 'address')
    .option('--verified', 'mark the address as verified')
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (o: EnvFlags & { email: string; verified?: boolean }) => {
      // A password on the command line would land in shell history and `ps`; the environment does not.
      const password = process.env.CAIRN_END_USER_PASSWORD || undefined;
      const user = await api().create(ctx.envName(o.env), {
        email: o.email,
        ...(password ? { password } : {}),
        email_verified: Boolean(o.verified),
      });
      ctx.print(user, Boolean(o.json), userLine);
    });

  endUsers.delete('delete an end user; every session ends at once');
  endUsers.run({
    name: 'revoke-sessions',
    description: 'end every session of an end user at once',
    run: (a, env, id) => a.revokeSessions(env, id),
    text: (r) => `${r.revoked} session(s) revoked`,
  });
  endUsers.run({
    name: 'lock',
    description: 'lock an end user: no sign-in until unlocked; every session ends at once',
    run: (a, env, id) => a.lock(env, id),
    text: userLine,
  });
  endUsers.run({
    name: 'unlock',
    description: 'unlock an end user: sign-in works again',
    run: (a, env, id) => a.unlock(env, id),
    text: userLine,
  });
}

function registerSessionCommands(program: Command, ctx: CliContext, api: () => EndUsersApi): void {
  const sessions = program.command('sessions').description('end users\u2019 sessions (secret key)');
  sessions
    .command('revoke')
    .description("end one of an end user's sessions; the others go on")
    .argument('<end-user-id>', 'eu_…')
    .argument('<session-id>', 'sess_…')
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (id: string, sessionId: string, o: EnvFlags) => {
      ctx.print(await api().revokeSession(ctx.envName(o.env), id, sessionId), Boolean(o.json), sessionLine);
    });
  sessions
    .command('list')
    .description("an end user's sessions, newest first")
    .argument('<end-user-id>', 'eu_…')
    .option('--env <name>', 'environment name')
    .option('--page-size <n>', '1 to 1000', pageSize)
    .option('--page-token <token>', 'next page')
    .option('--json', 'print JSON')
    .action(async (id: string, o: EnvFlags & { pageSize?: number; pageToken?: string }) => {
      const page = await api().listSessions(ctx.envName(o.env), id, { pageSize: o.pageSize, pageToken: o.pageToken });
      ctx.print(page, Boolean(o.json), (p: typeof page) => p.sessions.map(sessionLine).join('\n') || 'no sessions');
    });
}

export const register: Register = (program, ctx) => {
  const api = () => new EndUsersApi(ctx.client());
  const users = program.command('end-users').description("the application's end users (secret key)");

  registerUserCommands(users, ctx, api);
  registerSessionCommands(program, ctx, api);
};

// `cairn error-groups list|get|acknowledge|resolve|reopen --etag|batch-update`, `cairn error-events list|get`
// and the release files' commands (release-files.ts) over the HTTP API (docs/api.md "The operator CLI").
import { ErrorGroupsApi, type ErrorGroupSort, type ErrorGroupState, type BatchTriageResult } from '../../sdk/errors.ts';
import type { Command } from 'commander';
import { CliError, type CliContext, type Register } from '../context.ts';
import {
  collectionCommands,
  listCommand,
  resourceCommand,
  type EnvFlags,
  type ListRequest,
} from '../resource-commands.ts';
import { eventDetail, eventLine, groupDetail, groupLine } from './error-text.ts';
import { registerReleaseFileCommands } from './release-files.ts';

interface GroupFilters extends EnvFlags {
  q?: string;
  sort?: ErrorGroupSort;
  state?: ErrorGroupState;
  service?: string;
}

const stateOption = (v: string): ErrorGroupState => {
  if (v !== 'unresolved' && v !== 'acknowledged' && v !== 'resolved')
    throw new CliError('--state is unresolved, acknowledged or resolved');
  return v;
};

const sortOption = (v: string): ErrorGroupSort => {
  if (v !== 'last_seen' && v !== 'first_seen' && v !== 'events' && v !== 'users')
    throw new CliError('--sort is last_seen, first_seen, events or users');
  return v;
};

function registerGroupCommands(groups: Command, ctx: CliContext, api: () => ErrorGroupsApi): void {
  const byId = collectionCommands(groups, ctx, api, ['<id>', 'eg_…']);
  byId.list({
    description: 'groups, most recently seen first (or --sort), matching --q',
    envHelp: 'environment name (default: CAIRN_ENV)',
    filters: (c) =>
      c
        .option(
          '--q <search>',
          'a search, as the API reads it: \'is:unresolved release:1.2.0 browser:Chrome "a phrase"\'',
        )
        .option('--sort <order>', 'last_seen (default), first_seen, events or users', sortOption)
        .option('--state <state>', 'unresolved, acknowledged or resolved', stateOption)
        .option('--service <name>', 'only this service'),
    fetch: (a, { env, page, flags: o }: ListRequest<GroupFilters>) =>
      a.list(env, { q: o.q, sort: o.sort, state: o.state, serviceName: o.service, ...page }),
    lines: (p) => p.error_groups.map(groupLine),
    empty: 'no error groups',
  });

  byId.get('one group, with its etag', groupDetail);

  for (const [action, what] of [
    ['acknowledge', 'mark as seen and being worked on'],
    ['resolve', 'resolve; a later occurrence reopens it'],
    ['reopen', 'send back to triage'],
  ] as const) {
    byId.run({
      name: action,
      description: `${what} (needs the etag from \`get\`)`,
      options: (c) => c.requiredOption('--etag <etag>', 'the etag the group was read with'),
      run: (a, env, id, o: EnvFlags & { etag: string }) => a.triage(env, id, action, o.etag),
      text: groupDetail,
    });
  }
}

/** `<id>=<etag>`: a name holds no `=`, so the first one ends it (the etag is opaque). */
const etagPair = (arg: string): { name: string; etag: string } => {
  const at = arg.indexOf('=');
  if (at < 1 || at === arg.length - 1) throw new CliError(`${arg}: write each group as <id>=<etag>`);
  return { name: arg.slice(0, at), etag: arg.slice(at + 1) };
};
const resultLine = (name: string, r: BatchTriageResult) =>
  'error' in r ? `${name}  left as it is: ${r.error.code}: ${r.error.message}` : groupLine(r);

function registerBatchCommand(groups: Command, ctx: CliContext, api: () => ErrorGroupsApi): void {
  groups
    .command('batch-update')
    .description('acknowledge, resolve or reopen up to 100 groups, each only while its etag matches')
    .argument('<id=etag...>', 'each group as eg_…=<etag from `get` or `list`>')
    .requiredOption('--action <action>', 'acknowledge, resolve or reopen')
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (args: string[], o: EnvFlags & { action: string }) => {
      if (o.action !== 'acknowledge' && o.action !== 'resolve' && o.action !== 'reopen')
        throw new CliError('--action is acknowledge, resolve or reopen');
      const pairs = args.map(etagPair);
      const answer = await api().batchUpdate(ctx.envName(o.env), o.action, pairs);
      ctx.print(answer, Boolean(o.json), (a: typeof answer) =>
        a.results.map((r, i) => resultLine(pairs[i]!.name, r)).join('\n'),
      );
      // A group left as it was is the caller's to look at again: the exit status says so.
      const left = answer.results.filter((r) => 'error' in r).length;
      if (left > 0) throw new CliError(`${left} of ${pairs.length} groups were left as they are`);
    });
}

function registerEventCommands(program: Command, ctx: CliContext, api: () => ErrorGroupsApi): void {
  const events = program
    .command('error-events')
    .description('occurrences of an error group (secret key, observability:read)');
  listCommand(events, ctx, api, {
    description: "a group's occurrences, newest first",
    argument: ['<group-id>', 'eg_…'],
    tokenHelp: 'next page',
    fetch: (a, { env, page, id }) => a.listEvents(env, id, page),
    lines: (p) => p.error_events.map(eventLine),
    empty: 'no events',
  });
  resourceCommand(events, ctx, api, {
    name: 'get',
    description: 'one occurrence by uid (its group is found for you)',
    argument: ['<uid>', 'err_…'],
    options: (c) => c.option('--group <id>', 'the group, if known'),
    run: (a, env, uid, o: EnvFlags & { group?: string }) => a.getEvent(env, uid, o.group),
    text: eventDetail,
  });
}

export const register: Register = (program, ctx) => {
  const api = () => new ErrorGroupsApi(ctx.client());

  const groups = program.command('error-groups').description('error groups: list, read and triage (secret key)');
  registerGroupCommands(groups, ctx, api);
  registerBatchCommand(groups, ctx, api);

  registerEventCommands(program, ctx, api);

  registerReleaseFileCommands(program, ctx, api);
};

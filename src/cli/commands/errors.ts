// `cairn error-groups list|get|acknowledge|resolve|reopen --etag|batch-update`, `cairn error-events list|get`
// `cairn source-maps upload|list` and `cairn minified-sources upload|list` over the HTTP API (docs/api.md "The operator CLI").
import { readFile } from 'node:fs/promises';
import { ErrorGroupsApi, type ErrorGroupSort, type ErrorGroupState, type BatchTriageResult } from '../../sdk/errors.ts';
import type { Command } from 'commander';
import { CliError, pageText, type CliContext, type Register } from '../context.ts';
import { eventDetail, eventLine, groupDetail, groupLine } from './error-text.ts';

interface Common {
  env?: string;
  json?: boolean;
}

const pageSize = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new CliError('--page-size is 1 to 1000');
  return n;
};
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
  groups
    .command('list')
    .description('groups, most recently seen first (or --sort), matching --q')
    .option('--env <name>', 'environment name (default: CAIRN_ENV)')
    .option('--q <search>', 'a search, as the API reads it: \'is:unresolved release:1.2.0 browser:Chrome "a phrase"\'')
    .option('--sort <order>', 'last_seen (default), first_seen, events or users', sortOption)
    .option('--state <state>', 'unresolved, acknowledged or resolved', stateOption)
    .option('--service <name>', 'only this service')
    .option('--page-size <n>', '1 to 1000', pageSize)
    .option('--page-token <token>', 'next_page_token of the previous page')
    .option('--json', 'print JSON')
    .action(
      async (
        o: Common & {
          q?: string;
          sort?: ErrorGroupSort;
          state?: ErrorGroupState;
          service?: string;
          pageSize?: number;
          pageToken?: string;
        },
      ) => {
        const page = await api().list(ctx.envName(o.env), {
          q: o.q,
          sort: o.sort,
          state: o.state,
          serviceName: o.service,
          pageSize: o.pageSize,
          pageToken: o.pageToken,
        });
        ctx.print(page, Boolean(o.json), (p: typeof page) =>
          pageText(p.error_groups.map(groupLine), p.next_page_token, 'no error groups'),
        );
      },
    );

  groups
    .command('get')
    .description('one group, with its etag')
    .argument('<id>', 'eg_…')
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (id: string, o: Common) => {
      ctx.print(await api().get(ctx.envName(o.env), id), Boolean(o.json), groupDetail);
    });

  for (const [action, what] of [
    ['acknowledge', 'mark as seen and being worked on'],
    ['resolve', 'resolve; a later occurrence reopens it'],
    ['reopen', 'send back to triage'],
  ] as const) {
    groups
      .command(action)
      .description(`${what} (needs the etag from \`get\`)`)
      .argument('<id>', 'eg_…')
      .requiredOption('--etag <etag>', 'the etag the group was read with')
      .option('--env <name>', 'environment name')
      .option('--json', 'print JSON')
      .action(async (id: string, o: Common & { etag: string }) => {
        ctx.print(await api().triage(ctx.envName(o.env), id, action, o.etag), Boolean(o.json), groupDetail);
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
    .action(async (args: string[], o: Common & { action: string }) => {
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
  events
    .command('list')
    .description("a group's occurrences, newest first")
    .argument('<group-id>', 'eg_…')
    .option('--env <name>', 'environment name')
    .option('--page-size <n>', '1 to 1000', pageSize)
    .option('--page-token <token>', 'next page')
    .option('--json', 'print JSON')
    .action(async (groupId: string, o: Common & { pageSize?: number; pageToken?: string }) => {
      const page = await api().listEvents(ctx.envName(o.env), groupId, {
        pageSize: o.pageSize,
        pageToken: o.pageToken,
      });
      ctx.print(page, Boolean(o.json), (p: typeof page) =>
        pageText(p.error_events.map(eventLine), p.next_page_token, 'no events'),
      );
    });
  events
    .command('get')
    .description('one occurrence by uid (its group is found for you)')
    .argument('<uid>', 'err_…')
    .option('--group <id>', 'the group, if known')
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (uid: string, o: Common & { group?: string }) => {
      ctx.print(await api().getEvent(ctx.envName(o.env), uid, o.group), Boolean(o.json), eventDetail);
    });
}

function registerSourceMapCommands(program: Command, ctx: CliContext, api: () => ErrorGroupsApi): void {
  const maps = program.command('source-maps').description('source maps per release, for symbolication (secret key)');
  maps
    .command('upload')
    .description('upload the source map of one minified file')
    .argument('<map>', 'path of the .map file')
    .requiredOption('--release <release>', 'the release the events carry')
    .requiredOption('--file <url>', 'URL or path of the minified file, as frames print it')
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (path: string, o: Common & { release: string; file: string }) => {
      let map: unknown;
      try {
        map = JSON.parse(await readFile(path, 'utf8'));
      } catch (err) {
        throw new CliError(`${path} is not a readable JSON source map: ${(err as Error).message}`);
      }
      const out = await api().uploadSourceMap(ctx.envName(o.env), o.release, o.file, map);
      ctx.print(
        out,
        Boolean(o.json),
        () => `uploaded ${out.file} for release ${out.release} (${out.size_bytes} bytes)`,
      );
    });
  maps
    .command('list')
    .description("a release's source maps")
    .requiredOption('--release <release>', 'release')
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (o: Common & { release: string }) => {
      const page = await api().listSourceMaps(ctx.envName(o.env), o.release);
      ctx.print(
        page,
        Boolean(o.json),
        (p: typeof page) =>
          p.source_maps.map((m) => `${m.file}  ${m.size_bytes} B  ${m.create_time}`).join('\n') || 'no source maps',
      );
    });
}

function registerMinifiedCommands(program: Command, ctx: CliContext, api: () => ErrorGroupsApi): void {
  const minified = program
    .command('minified-sources')
    .description('minified files per release: function names when a map has no sourcesContent (secret key)');
  minified
    .command('upload')
    .description('upload the text of one minified file')
    .argument('<path>', 'path of the minified .js file')
    .requiredOption('--release <release>', 'the release the events carry')
    .requiredOption('--file <url>', 'URL or path of the minified file, as frames print it')
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (path: string, o: Common & { release: string; file: string }) => {
      let source: string;
      try {
        source = await readFile(path, 'utf8');
      } catch (err) {
        throw new CliError(`${path} could not be read: ${(err as Error).message}`);
      }
      const out = await api().uploadMinifiedSource(ctx.envName(o.env), o.release, o.file, source);
      ctx.print(
        out,
        Boolean(o.json),
        () => `uploaded ${out.file} for release ${out.release} (${out.size_bytes} bytes)`,
      );
    });
  minified
    .command('list')
    .description("a release's minified files")
    .requiredOption('--release <release>', 'release')
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (o: Common & { release: string }) => {
      const page = await api().listMinifiedSources(ctx.envName(o.env), o.release);
      ctx.print(
        page,
        Boolean(o.json),
        (p: typeof page) =>
          p.minified_sources.map((m) => `${m.file}  ${m.size_bytes} B  ${m.create_time}`).join('\n') ||
          'no minified files',
      );
    });
}

export const register: Register = (program, ctx) => {
  const api = () => new ErrorGroupsApi(ctx.client());

  const groups = program.command('error-groups').description('error groups: list, read and triage (secret key)');
  registerGroupCommands(groups, ctx, api);
  registerBatchCommand(groups, ctx, api);

  registerEventCommands(program, ctx, api);

  registerSourceMapCommands(program, ctx, api);

  registerMinifiedCommands(program, ctx, api);
};

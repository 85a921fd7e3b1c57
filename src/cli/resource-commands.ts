// The commands most API areas share (alerts, webhooks, end users, error groups): a list of an
// environment's collection, one page with a line per item, and a command on one resource by its id
// (get, delete, …) that prints the answer; collectionCommands binds them to one collection and its
// id argument. Written once, so their flags, help and --page-size bounds read the same in every
// area. The SDK client is made before the environment name is read, as in every other command, so
// a missing CAIRN_API_URL is the error reported first.
import type { Command } from 'commander';
import { CliError, type CliContext } from './context.ts';

/** The flags every API command takes. */
export interface EnvFlags {
  env?: string;
  json?: boolean;
}

/** A page request, as the SDK's list methods take it. */
export interface Paging {
  pageSize?: number;
  pageToken?: string;
}

/** --page-size: the API's lists take 1 to 1000 items a page (docs/api.md "Lists"). */
export const pageSize = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new CliError('--page-size is 1 to 1000');
  return n;
};

/** A page of a list as text: one line per item, then how to ask for the next page, or `empty`. */
export function pageText(lines: string[], nextPageToken: string | undefined | null, empty: string): string {
  return [...lines, ...(nextPageToken ? [`more: --page-token ${nextPageToken}`] : [])].join('\n') || empty;
}

/** What every list answers: its items under their collection's name, and the next page's token. */
export interface PageLike {
  next_page_token?: string | null;
}

/** What a list command asks its SDK method for. */
export interface ListRequest<Flags> {
  env: string;
  page: Paging;
  /** The value of the command's argument (the resource whose collection it lists); '' without one. */
  id: string;
  /** Every flag given, the list's own filters among them. */
  flags: Flags;
}

export interface ListSpec<Api, Page, Flags> {
  /** The command's name; `list` unless given. */
  name?: string;
  description: string;
  /** `[name, description]` of the one argument, when the collection belongs to a resource. */
  argument?: readonly [string, string];
  /** The help of --env; `environment name` unless given. */
  envHelp?: string;
  /** The help of --page-token; `next_page_token of the previous page` unless given. */
  tokenHelp?: string;
  /** The list's own options (its filters), placed after --env. */
  filters?: (command: Command) => void;
  fetch(api: Api, request: ListRequest<Flags>): Promise<Page>;
  lines(page: Page): string[];
  /** What is printed when the page is empty and there is no next one. */
  empty: string;
}

/** `<parent> <name> [argument]`: one page of a collection, a line per item, then the next page's token. */
export function listCommand<Api, Page extends PageLike, Flags extends EnvFlags = EnvFlags>(
  parent: Command,
  ctx: CliContext,
  api: () => Api,
  spec: ListSpec<Api, Page, Flags>,
): Command {
  const command = parent.command(spec.name ?? 'list').description(spec.description);
  if (spec.argument) command.argument(...spec.argument);
  command.option('--env <name>', spec.envHelp ?? 'environment name');
  spec.filters?.(command);
  return command
    .option('--page-size <n>', '1 to 1000', pageSize)
    .option('--page-token <token>', spec.tokenHelp ?? 'next_page_token of the previous page')
    .option('--json', 'print JSON')
    .action(async (...args: unknown[]) => {
      const { flags, id } = given<Flags & Paging>(args);
      const client = api();
      const page = await spec.fetch(client, {
        env: ctx.envName(flags.env),
        page: { pageSize: flags.pageSize, pageToken: flags.pageToken },
        id,
        flags,
      });
      ctx.print(page, Boolean(flags.json), (p: Page) => pageText(spec.lines(p), p.next_page_token, spec.empty));
    });
}

export interface ResourceSpec<Api, T, Flags extends EnvFlags = EnvFlags> {
  name: string;
  description: string;
  /** `[name, description]` of the resource's id argument, e.g. `['<id>', 'alr_…']`. */
  argument: readonly [string, string];
  /** The command's own options, placed before --env. */
  options?: (command: Command) => void;
  run(api: Api, env: string, id: string, flags: Flags): Promise<T>;
  text(answer: T): string;
}

/** `<parent> <name> <id>`: one call on one resource of the environment, its answer printed. */
export function resourceCommand<Api, T, Flags extends EnvFlags = EnvFlags>(
  parent: Command,
  ctx: CliContext,
  api: () => Api,
  spec: ResourceSpec<Api, T, Flags>,
): Command {
  const command = parent
    .command(spec.name)
    .description(spec.description)
    .argument(...spec.argument);
  spec.options?.(command);
  return command
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (id: string, o: Flags) => {
      const client = api();
      ctx.print(await spec.run(client, ctx.envName(o.env), id, o), Boolean(o.json), spec.text);
    });
}

/** An area's SDK class with the standard calls on its collection. */
export interface CollectionApi {
  list(env: string, page: Paging): Promise<PageLike>;
  get(env: string, id: string): Promise<unknown>;
}

interface Deletable {
  delete(env: string, id: string): Promise<unknown>;
}

type PageOf<Api> = Api extends { list(env: string, page: Paging): Promise<infer P> } ? P : never;
type ItemOf<Api> = Api extends { get(env: string, id: string): Promise<infer T> } ? T : never;

/**
 * The commands on one collection of an environment's resources (alert rules, webhook endpoints, end
 * users, error groups), whose id is the argument `id` of every command but `list`. `list` calls
 * the SDK's `list(env, page)` unless the spec says otherwise; `listOf` lists what belongs to one
 * resource; `delete` is there when the SDK class has one.
 */
export function collectionCommands<Api extends CollectionApi>(
  parent: Command,
  ctx: CliContext,
  api: () => Api,
  id: readonly [string, string],
) {
  const list = <Flags extends EnvFlags = EnvFlags>(
    spec: Omit<ListSpec<Api, PageOf<Api>, Flags>, 'name' | 'argument' | 'fetch'> &
      Partial<Pick<ListSpec<Api, PageOf<Api>, Flags>, 'fetch'>>,
  ) =>
    listCommand(parent, ctx, api, {
      ...spec,
      fetch: spec.fetch ?? ((a, r) => a.list(r.env, r.page) as Promise<PageOf<Api>>),
    });
  const listOf = <Page extends PageLike>(
    name: string,
    spec: Omit<ListSpec<Api, Page, EnvFlags>, 'name' | 'argument'>,
  ) => listCommand(parent, ctx, api, { ...spec, name, argument: id });
  const run = <T, Flags extends EnvFlags = EnvFlags>(spec: Omit<ResourceSpec<Api, T, Flags>, 'argument'>) =>
    resourceCommand(parent, ctx, api, { ...spec, argument: id });
  const get = (description: string, text: (item: ItemOf<Api>) => string) =>
    run({ name: 'get', description, run: (a, env, i) => a.get(env, i) as Promise<ItemOf<Api>>, text });
  // The return type offers `delete` only where Api has one, so the cast below is that promise kept.
  const remove = (description: string) =>
    run({
      name: 'delete',
      description,
      run: async (a, env, i) => {
        await (a as Api & Deletable).delete(env, i);
        return { deleted: i };
      },
      text: (d) => `deleted ${d.deleted}`,
    });
  return { list, listOf, run, get, delete: remove as Api extends Deletable ? typeof remove : never };
}

export type CollectionCommands<Api extends CollectionApi> = ReturnType<typeof collectionCommands<Api>>;

/** Commander calls an action with the arguments' values, then the options, then the command. */
function given<Flags>(args: unknown[]): { flags: Flags; id: string } {
  const command = args.at(-1) as Command;
  return { flags: command.opts<Flags & Record<string, unknown>>(), id: String(command.processedArgs[0] ?? '') };
}

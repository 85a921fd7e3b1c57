// `cairn source-maps upload|list` and `cairn minified-sources upload|list` over the HTTP API
// (docs/api.md "The operator CLI"): a release's two kinds of file, uploaded and listed the same way
// (the SDK's uploadReleaseFile and listReleaseFiles); only how a file is read differs.
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { ErrorGroupsApi, ReleaseFileKind } from '../../sdk/errors.ts';
import { CliError, type CliContext } from '../context.ts';
import type { EnvFlags } from '../resource-commands.ts';

interface ReleaseFileCommands {
  kind: ReleaseFileKind;
  /** The command group's name and description. */
  command: string;
  description: string;
  upload: { description: string; argument: readonly [string, string] };
  /** The upload's content, from the file at `path`; a CliError says why it cannot be had. */
  read(path: string): Promise<unknown>;
  listDescription: string;
  empty: string;
}

const sourceMaps: ReleaseFileCommands = {
  kind: 'source_maps',
  command: 'source-maps',
  description: 'source maps per release, for symbolication (secret key)',
  upload: { description: 'upload the source map of one minified file', argument: ['<map>', 'path of the .map file'] },
  async read(path) {
    try {
      return JSON.parse(await readFile(path, 'utf8')) as unknown;
    } catch (err) {
      throw new CliError(`${path} is not a readable JSON source map: ${(err as Error).message}`);
    }
  },
  listDescription: "a release's source maps",
  empty: 'no source maps',
};

const minifiedSources: ReleaseFileCommands = {
  kind: 'minified_sources',
  command: 'minified-sources',
  description: 'minified files per release: function names when a map has no sourcesContent (secret key)',
  upload: {
    description: 'upload the text of one minified file',
    argument: ['<path>', 'path of the minified .js file'],
  },
  async read(path) {
    try {
      return await readFile(path, 'utf8');
    } catch (err) {
      throw new CliError(`${path} could not be read: ${(err as Error).message}`);
    }
  },
  listDescription: "a release's minified files",
  empty: 'no minified files',
};

function registerReleaseFiles(program: Command, ctx: CliContext, api: () => ErrorGroupsApi, s: ReleaseFileCommands) {
  const files = program.command(s.command).description(s.description);
  files
    .command('upload')
    .description(s.upload.description)
    .argument(...s.upload.argument)
    .requiredOption('--release <release>', 'the release the events carry')
    .requiredOption('--file <url>', 'URL or path of the minified file, as frames print it')
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (path: string, o: EnvFlags & { release: string; file: string }) => {
      const content = await s.read(path);
      const out = await api().uploadReleaseFile(ctx.envName(o.env), s.kind, o.release, o.file, content);
      ctx.print(
        out,
        Boolean(o.json),
        () => `uploaded ${out.file} for release ${out.release} (${out.size_bytes} bytes)`,
      );
    });
  files
    .command('list')
    .description(s.listDescription)
    .requiredOption('--release <release>', 'release')
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (o: EnvFlags & { release: string }) => {
      const page = await api().listReleaseFiles(ctx.envName(o.env), s.kind, o.release);
      ctx.print(
        page,
        Boolean(o.json),
        (p: typeof page) =>
          p[s.kind].map((m) => `${m.file}  ${m.size_bytes} B  ${m.create_time}`).join('\n') || s.empty,
      );
    });
}

export function registerReleaseFileCommands(program: Command, ctx: CliContext, api: () => ErrorGroupsApi): void {
  registerReleaseFiles(program, ctx, api, sourceMaps);
  registerReleaseFiles(program, ctx, api, minifiedSources);
}

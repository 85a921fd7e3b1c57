// `cairn storage …`: buckets, objects and versions.
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Command } from 'commander';
import { StorageApi } from '../../../sdk/backups.ts';
import type { CliContext } from '../../context.ts';
import { progressBar } from '../../progress.ts';

export function registerStorage(program: Command, ctx: CliContext): void {
  const storage = program.command('storage').description('storage buckets, objects and versions');
  const api = (env?: string) => new StorageApi(ctx.client(), ctx.envName(env));
  const json = (cmd: Command) => cmd.option('--env <name>', 'environment').option('--json', 'print JSON');

  bucketCommands(storage, ctx, api, json);
  objectCommands(storage, ctx, api, json);
  versionCommands(storage, ctx, api, json);
}

type Api = (env?: string) => StorageApi;
type Opts = (cmd: Command) => Command;

function bucketCommands(storage: Command, ctx: CliContext, api: Api, json: Opts): void {
  const buckets = storage.command('buckets').description('buckets');
  json(buckets.command('create').argument('<name>', 'bucket name')).action(
    async (name: string, o: { env?: string; json?: boolean }) =>
      ctx.print(await api(o.env).createBucket(name), Boolean(o.json)),
  );
  json(buckets.command('list')).action(async (o: { env?: string; json?: boolean }) =>
    ctx.print(
      await api(o.env).listBuckets(),
      Boolean(o.json),
      (x: { buckets: { bucket: string; versioning: string }[] }) =>
        x.buckets.map((b) => `${b.bucket}  versioning ${b.versioning}`).join('\n') || 'no buckets',
    ),
  );
}

function objectCommands(storage: Command, ctx: CliContext, api: Api, json: Opts): void {
  json(
    storage
      .command('put')
      .argument('<bucket>')
      .argument('<key>')
      .argument('<file>', 'file to upload')
      .option('--content-type <type>', 'content type'),
  ).action(
    async (bucket: string, key: string, file: string, o: { env?: string; json?: boolean; contentType?: string }) => {
      const { size } = await stat(file);
      const bar = progressBar(`upload ${key}`);
      let done = 0;
      const body = Readable.toWeb(
        createReadStream(file).on('data', (c: string | Buffer) => {
          done += c.length;
          bar(done, size);
        }),
      ) as unknown as ReadableStream;
      ctx.print(await api(o.env).put(bucket, key, body, o.contentType), Boolean(o.json));
    },
  );
  json(
    storage
      .command('get')
      .argument('<bucket>')
      .argument('<key>')
      .option('--version-id <id>', 'an older version')
      .option('-o, --output <file>', 'file (default stdout)'),
  ).action(async (bucket: string, key: string, o: { env?: string; versionId?: string; output?: string }) => {
    const res = await api(o.env).get(bucket, key, o.versionId);
    await pipeline(
      Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>),
      o.output ? createWriteStream(o.output) : process.stdout,
    );
  });
  json(
    storage
      .command('rm')
      .argument('<bucket>')
      .argument('<key>')
      .option('--version-id <id>', 'delete this version for good'),
  ).action(async (bucket: string, key: string, o: { env?: string; json?: boolean; versionId?: string }) =>
    ctx.print(await api(o.env).delete(bucket, key, o.versionId), Boolean(o.json)),
  );
}

function versionCommands(storage: Command, ctx: CliContext, api: Api, json: Opts): void {
  json(storage.command('enable-versioning').argument('<bucket>')).action(
    async (bucket: string, o: { env?: string; json?: boolean }) =>
      ctx.print(await api(o.env).enableVersioning(bucket), Boolean(o.json)),
  );
  json(
    storage.command('versions').description('list versions, newest first').argument('<bucket>').argument('<key>'),
  ).action(async (bucket: string, key: string, o: { env?: string; json?: boolean }) => {
    const versions = await api(o.env).listVersions(bucket, key);
    ctx.print({ versions }, Boolean(o.json), (x: { versions: typeof versions }) =>
      x.versions
        .map(
          (v) =>
            `${v.versionId}  ${v.lastModified}${v.isLatest ? '  latest' : ''}${v.isDeleteMarker ? '  delete marker' : `  ${v.size} B`}`,
        )
        .join('\n'),
    );
  });
  json(
    storage
      .command('restore-version')
      .description('copy a version over the latest, as a new version')
      .argument('<bucket>')
      .argument('<key>')
      .argument('<versionId>'),
  ).action(async (bucket: string, key: string, versionId: string, o: { env?: string; json?: boolean }) =>
    ctx.print(await api(o.env).restoreVersion(bucket, key, versionId), Boolean(o.json)),
  );
}

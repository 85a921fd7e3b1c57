// `cairn backups download|decrypt`: a backup's bytes on this machine, decrypted by the service or
// offline with the service key.
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Command } from 'commander';
import { openDataKey, type SealedKey } from '../../../domain/backups/downloads/download.ts';
import { BackupIntegrityError, decryptStream } from '../../../domain/backups/format/format.ts';
import { CliError, type CliContext } from '../../context.ts';
import { keyringFromEnv } from '../../keyring.ts';
import { mib, progressBar } from '../../progress.ts';
import type { Api } from './backups.ts';

export function downloadCommand(backups: Command, ctx: CliContext, api: Api): void {
  backups
    .command('download')
    .description('write the decrypted .sql.gz (or, with --sealed, the encrypted object for decrypt)')
    .argument('<id>', 'backup_…')
    .option('-o, --output <file>', 'file (default <id>.sql.gz, or <id>.cairnbk with --sealed; - for stdout)')
    .option('--sealed', 'the stored object as it is, and <file>.key.json: its data key, sealed by the service key')
    .action(async (id: string, opts: { output?: string; sealed?: boolean }) => {
      if (opts.sealed) {
        const res = await api().downloadSealed(id);
        const file = opts.output ?? `${id}.cairnbk`;
        if (file === '-') throw new CliError('--sealed writes two files: name one with -o (not -)');
        const key = JSON.parse(
          Buffer.from(res.headers.get('cairn-sealed-key') ?? '', 'base64url').toString(),
        ) as object;
        await writeFile(`${file}.key.json`, `${JSON.stringify(key, null, 2)}\n`);
        await pipeline(Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>), createWriteStream(file));
        ctx.progress(
          `wrote ${file} and ${file}.key.json; decrypt with: cairn backups decrypt ${file} (CAIRN_ENCRYPTION_KEY set)`,
        );
        return;
      }
      const res = await api().download(id);
      const total = Number(res.headers.get('content-length')) || undefined;
      const bar = progressBar(`download ${id}`);
      let done = 0;
      const count = new Transform({
        transform(chunk: Buffer, _enc, cb) {
          done += chunk.length;
          bar(done, total);
          cb(null, chunk);
        },
      });
      const file = opts.output ?? `${id}.sql.gz`;
      await pipeline(
        Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>),
        count,
        file === '-' ? process.stdout : createWriteStream(file),
      );
      bar(total ?? done, total ?? done);
      if (file !== '-') ctx.progress(`wrote ${file} (${mib(done)})`);
    });
}

export function decryptCommand(backups: Command, ctx: CliContext, _api: Api): void {
  backups
    .command('decrypt')
    .description('offline: turn a --sealed download into its .sql.gz, with CAIRN_ENCRYPTION_KEY (no server needed)')
    .argument('<file>', 'the .cairnbk file; its key is read from <file>.key.json')
    .option('-o, --output <file>', 'file (default <file> with .sql.gz instead of .cairnbk; - for stdout)')
    .action(async (file: string, opts: { output?: string }) => {
      const sealed = JSON.parse(
        await readFile(`${file}.key.json`, 'utf8').catch(() => {
          throw new CliError(`${file}.key.json is missing: it comes with \`cairn backups download <id> --sealed\``);
        }),
      ) as SealedKey;
      let key: Buffer;
      try {
        key = openDataKey(keyringFromEnv(process.env), sealed);
      } catch (err) {
        if (err instanceof CliError) throw err;
        throw new CliError(
          `the data key of ${sealed.backup_id} does not open with this CAIRN_ENCRYPTION_KEY (it was sealed with key id ${sealed.key_id}): set the key the service ran with then, with CAIRN_ENCRYPTION_KEY_ID=${sealed.key_id}, or list it in CAIRN_ENCRYPTION_OLD_KEYS as ${sealed.key_id}:<key>`,
        );
      }
      const out = opts.output ?? file.replace(/\.cairnbk$/, '') + '.sql.gz';
      const total = (await stat(file)).size;
      const bar = progressBar(`decrypt ${sealed.backup_id}`);
      let done = 0;
      async function* counted(source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          done += chunk.length;
          bar(done, total);
          yield chunk;
        }
      }
      // Written aside and renamed at the end: a cut file is found out only at its last segment,
      // and a half-written dump must never look like a whole one.
      const partial = `${out}.partial`;
      try {
        await pipeline(
          Readable.from(decryptStream(counted(createReadStream(file)), key)),
          out === '-' ? process.stdout : createWriteStream(partial, { mode: 0o600 }),
        );
        if (out !== '-') await rename(partial, out);
      } catch (err) {
        if (out !== '-') await rm(partial, { force: true });
        if (err instanceof BackupIntegrityError)
          throw new CliError(`${file} is damaged or incomplete (${err.message}); nothing was written to ${out}`);
        throw err;
      }
      ctx.progress(`wrote ${out}`);
    });
}

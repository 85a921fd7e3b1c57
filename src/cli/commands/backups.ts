// `cairn backups …` and `cairn storage …`, over the HTTP API through the SDK.
// Progress bars go to stderr, so --json output on stdout stays clean.
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Command } from 'commander';
import {
  BackupsApi,
  StorageApi,
  type Backup,
  type BackupSettings,
  type Operation,
  type RestorePreview,
} from '../../sdk/backups.ts';
import { openDataKey, type SealedKey } from '../../domain/backups/download.ts';
import { BackupIntegrityError, decryptStream } from '../../domain/backups/format.ts';
import { CliError, type CliContext, type Register } from '../context.ts';
import { keyringFromEnv } from '../keyring.ts';
import { mib, progressBar } from '../progress.ts';

function describeDrill(b: Backup): string {
  if (!b.verification) return 'not drilled';
  return `drill ${b.verification.result} ${b.verified_time ?? ''}${b.verification.reason ? `\n    drill: ${b.verification.reason}` : ''}`;
}

function describeBackup(b: Backup): string {
  const drill = b.state === 'succeeded' ? `  ${describeDrill(b)}` : '';
  return `${b.id}  ${b.state.padEnd(9)} ${b.type.padEnd(7)} ${b.trigger.padEnd(11)} ${mib(b.size_bytes).padStart(10)}  ${b.create_time}${b.billable ? '  billable' : ''}${drill}${b.error ? `\n    error: ${b.error}` : ''}`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** `--at`: a whole hour in UTC, as Heroku's `pg:backups:schedule --at "02:00 UTC"` takes it. */
function scheduleHour(value: string): number {
  const m = /^\s*(\d{1,2})(?::00)?\s*(?:UTC)?\s*$/i.exec(value);
  const hour = m ? Number(m[1]) : NaN;
  if (!(hour >= 0 && hour <= 23))
    throw new CliError(`--at takes a whole hour in UTC, such as "02:00 UTC" or "14:00" (not "${value}")`);
  return hour;
}

/** `cairn backups info`: one field a line, as `heroku pg:backups:info` shows a backup. */
function backupInfo(b: Backup): string {
  const rows: [string, string | number | null | undefined][] = [
    ['Backup', b.id],
    ['State', b.state],
    ['Type', `${b.type} (${b.trigger})`],
    ['Object', b.key],
    ['Size', b.size_bytes === null ? null : `${mib(b.size_bytes)} (${b.size_bytes} bytes)`],
    ['SHA-256', b.sha256],
    ['Postgres', b.pg_version],
    ['pg_dump', b.pg_dump_version],
    ['Encryption', b.encryption ? `${b.encryption.algorithm}, key ${b.encryption.key_id}` : null],
    ['Created', b.create_time],
    ['Started', b.start_time],
    ['Finished', b.finish_time],
    ['Duration', b.duration_ms === null ? null : `${(b.duration_ms / 1000).toFixed(1)} s`],
    ['Expires', b.expire_time],
    ['Billable', b.billable ? 'yes' : 'no'],
    ['Drill', b.state === 'succeeded' ? describeDrill(b) : null],
    ['Error', b.error],
  ];
  return rows
    .filter(([, v]) => v !== null && v !== undefined && v !== '')
    .map(([k, v]) => `${`${k}:`.padEnd(12)}${v}`)
    .join('\n');
}

/** The target's tables that a restore replaces, largest first, as the plan prints them. */
export function describeReplaced(plan: RestorePreview): string {
  if (!plan.replaces)
    return `  replaces: the whole database (every schema); ${plan.replaces_unknown ?? 'its tables could not be listed'}`;
  const { tables, table_count, estimated_rows } = plan.replaces;
  if (table_count === 0) return '  replaces: the whole database (every schema); it holds no tables now';
  const largest = [...tables].sort((x, y) => (y.estimated_rows ?? -1) - (x.estimated_rows ?? -1)).slice(0, 10);
  const lines = largest.map(
    (t) =>
      `    ${t.name}  ${t.estimated_rows === null ? 'rows unknown' : `~${t.estimated_rows.toLocaleString('en-US')} rows`}`,
  );
  const more = table_count > largest.length ? `\n    … and ${table_count - largest.length} more tables` : '';
  return `  replaces: the whole database (every schema): ${table_count} tables, ~${estimated_rows.toLocaleString('en-US')} rows in all\n${lines.join('\n')}${more}`;
}

function registerBackups(program: Command, ctx: CliContext): void {
  const api = () => new BackupsApi(ctx.client());
  const backups = program.command('backups').description('database backups of an environment');

  backups
    .command('create')
    .description('take a manual backup (free up to 10 a day, then billable)')
    .option('--env <name>', 'environment (default CAIRN_ENV)')
    .option('--no-wait', 'return at once')
    .option('--json', 'print JSON')
    .action(async (opts: { env?: string; wait: boolean; json?: boolean }) => {
      const created = await api().create(ctx.envName(opts.env));
      if (created.billable) ctx.progress('note: more than 10 manual backups today; this one is billable');
      // The bytes written so far (gzip, encrypted) and the rate; the total is known only at the end.
      const bar = progressBar(`backup ${created.id}`, process.stderr, { plain: Boolean(opts.json) });
      let last = '';
      const done = opts.wait
        ? await api().waitForBackup(created.id, (b) => {
            if (b.state === 'running' && b.progress_bytes !== undefined) bar(b.progress_bytes, undefined);
            else if (b.state !== last) ctx.progress(`${b.id}: ${b.state}`);
            last = b.state;
          })
        : created;
      if (process.stderr.isTTY && !opts.json && opts.wait) process.stderr.write('\n');
      ctx.print(done, Boolean(opts.json), describeBackup);
      if (done.state === 'failed') throw new CliError(`backup failed: ${done.error ?? 'unknown'}`);
    });

  backups
    .command('list')
    .description('backups, newest first')
    .option('--env <name>', 'environment')
    .option('--page-size <n>', 'items', '50')
    .option('--json', 'print JSON')
    .action(async (opts: { env?: string; pageSize: string; json?: boolean }) => {
      const page = await api().list(ctx.envName(opts.env), { pageSize: Number(opts.pageSize) });
      ctx.print(page, Boolean(opts.json), (p: typeof page) => p.backups.map(describeBackup).join('\n') || 'no backups');
    });

  backups
    .command('get')
    .argument('<id>', 'backup_…')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) =>
      ctx.print(await api().get(id), Boolean(opts.json), describeBackup),
    );

  backups
    .command('info')
    .description('everything about one backup: sizes, versions, encryption, timings, the last drill')
    .argument('<id>', 'backup_…')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) =>
      ctx.print(await api().get(id), Boolean(opts.json), backupInfo),
    );

  const describeSchedule = (x: BackupSettings) =>
    x.schedule_enabled
      ? `daily at ${pad(x.schedule_hour_utc)}:00 UTC (kept ${x.retention_days.daily} days), weekly on Sunday (${x.retention_days.weekly} days), monthly on the 1st (${x.retention_days.monthly} days); restore drills ${x.drill_schedule}`
      : 'no scheduled backups (turn them on with: cairn backups schedule --at "03:00 UTC")';

  backups
    .command('schedules')
    .description("the environment's backup schedule and retention")
    .option('--env <name>', 'environment')
    .option('--json', 'print JSON')
    .action(async (opts: { env?: string; json?: boolean }) =>
      ctx.print(await api().settings(ctx.envName(opts.env)), Boolean(opts.json), describeSchedule),
    );

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

  backups
    .command('url')
    .description('an expiring link to the decrypted .sql.gz that needs no key (curl it, hand it to CI)')
    .argument('<id>', 'backup_…')
    .option('--expires-in <seconds>', 'how long it works (60 to 86400)', (v) => Number(v), 3600)
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { expiresIn: number; json?: boolean }) => {
      const link = await api().url(id, opts.expiresIn);
      ctx.print(
        link,
        Boolean(opts.json),
        (l: typeof link) => `${l.url}\n(works until ${l.expire_time}; anyone with it can download the backup)`,
      );
    });

  backups
    .command('delete')
    .description('delete a backup that has ended, and its stored object (cannot be undone)')
    .argument('<id>', 'backup_…')
    .option('--confirm', 'say yes: the backup cannot be recovered afterwards')
    .action(async (id: string, opts: { confirm?: boolean }) => {
      if (!opts.confirm) throw new CliError(`deleting ${id} cannot be undone; run again with --confirm to delete it`);
      await api().delete(id);
      ctx.progress(`deleted ${id}`);
    });

  backups
    .command('usage')
    .description('manual backups today, free left, stored GB and the monthly estimate')
    .option('--env <name>', 'environment')
    .option('--json', 'print JSON')
    .action(async (opts: { env?: string; json?: boolean }) => {
      const u = await api().usage(ctx.envName(opts.env));
      ctx.print(
        u,
        Boolean(opts.json),
        (x: typeof u) =>
          `${x.date}: ${x.manual_today} manual (${x.free_left} free left, ${x.billable_today} billable); stored ${x.stored_gb} GB ≈ ${x.monthly_estimate_usd} USD/month`,
      );
    });

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

  backups
    .command('drill')
    .description('restore the latest backup into a scratch database and compare every table with it (a restore drill)')
    .option('--env <name>', 'environment (default CAIRN_ENV)')
    .option('--json', 'print JSON')
    .action(async (opts: { env?: string; json?: boolean }) => {
      const env = ctx.envName(opts.env);
      const op = await api().drill(env);
      ctx.progress(`drilling ${op.metadata.backup_id ?? '?'} of ${env} in a scratch database…`);
      const bars = new Map<string, ReturnType<typeof progressBar>>();
      const final = await api().waitForOperation(op.name, (o: Operation) => {
        const phase = o.metadata.phase ?? o.metadata.state;
        if ((phase === 'verifying' || phase === 'restoring') && o.metadata.bytes_total > 0) {
          if (!bars.has(phase)) bars.set(phase, progressBar(phase, process.stderr, { plain: Boolean(opts.json) }));
          bars.get(phase)!(o.metadata.bytes_read, o.metadata.bytes_total);
        } else if (phase === 'comparing' && !bars.has(phase)) {
          bars.set(phase, () => undefined);
          ctx.progress('comparing every table with the backup…');
        }
      });
      const verdict = final.response?.verification;
      ctx.print(final, Boolean(opts.json), (o: Operation) =>
        o.error
          ? `drill failed to run: ${o.error.message}`
          : `drill of ${o.metadata.backup_id ?? '?'} ${verdict?.result ?? '?'}${verdict?.reason ? `: ${verdict.reason}` : ''}`,
      );
      if (final.error) throw new CliError(final.error.message);
      if (verdict?.result === 'failed') throw new CliError(`the drill failed: ${verdict.reason ?? 'no reason given'}`);
    });

  backups
    .command('restore')
    .description("replace an environment's database with a backup (a pre-restore backup is taken first)")
    .argument('<id>', 'backup_…')
    .option('--env <name>', 'target environment')
    .option('--confirm', 'really replace the target database')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { env?: string; confirm?: boolean; json?: boolean }) => {
      const target = ctx.envName(opts.env);
      // The restore's own checks run first (an unknown target, no database, one already running),
      // so the plan printed is one that --confirm would really carry out.
      const plan = await api().previewRestore(id, target);
      const b = plan.backup;
      ctx.progress(
        `This replaces the database of ${target} (${plan.target_mode}) with backup ${b.id}\n  taken ${b.create_time} (${b.type}, ${mib(b.size_bytes)}, PostgreSQL ${b.pg_version ?? '?'})\n${describeReplaced(plan)}\nA pre-restore backup of ${target} is taken first; the restore itself cannot be undone.`,
      );
      if (!opts.confirm) throw new CliError('not restored: run again with --confirm to replace the database');
      const op = await api().restore(id, target);
      const bars = new Map<string, ReturnType<typeof progressBar>>();
      const final = await api().waitForOperation(op.name, (o: Operation) => {
        const phase = o.metadata.phase ?? o.metadata.state;
        if (phase === 'verifying' || phase === 'restoring') {
          if (!bars.has(phase)) bars.set(phase, progressBar(phase, process.stderr, { plain: Boolean(opts.json) }));
          bars.get(phase)!(o.metadata.bytes_read, o.metadata.bytes_total);
        }
      });
      ctx.print(final, Boolean(opts.json), (o: Operation) =>
        o.error
          ? `restore failed: ${o.error.message}`
          : `restored ${id} into ${target} (pre-restore backup ${o.metadata.pre_restore_backup_id})${leftOut(o)}`,
      );
      if (final.error) throw new CliError(final.error.message);
    });
}

/** What a restore left out because of roles (docs/api.md "What a restore keeps"), or nothing. */
function leftOut(o: Operation): string {
  const s = o.response?.skipped;
  if (!s || s.statements === 0) return '';
  return `\n${s.statements} statement(s) left out: they name roles this database's server lacks or its role may not act as (${s.roles.join(', ')})`;
}

function registerStorage(program: Command, ctx: CliContext): void {
  const storage = program.command('storage').description('storage buckets, objects and versions');
  const api = (env?: string) => new StorageApi(ctx.client(), ctx.envName(env));
  const json = (cmd: Command) => cmd.option('--env <name>', 'environment').option('--json', 'print JSON');

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

export const register: Register = (program, ctx) => {
  registerBackups(program, ctx);
  registerStorage(program, ctx);
};

// `cairn admin …`: the operator's commands. They talk to the database directly (DATABASE_URL),
// never through the API, and print each plaintext key exactly once.
import { dsnFor } from '../../domain/errors/sentry/client-keys.ts';
import type { Command } from 'commander';
import { checkScopes, createEnvWithKeys, createKey, requireEnv, requireEnvPath } from '../../domain/tenancy/envs.ts';
import { tenancyQueries } from '../../domain/tenancy/queries.ts';
import { readStatus, type OperationalStatus } from '../../domain/operations/status.ts';
import { pruneErrors } from '../../domain/errors/retention/prune.ts';
import { createBoss } from '../../jobs/index.ts';
import { queues } from '../../queues.ts';
import { CliError, type CliContext } from '../context.ts';
import { createConsoleLink, type ConsoleLink } from '../../domain/console/links.ts';
import { registerDemoDatabase, registerSetDatabase } from './admin-database.ts';

/** `cairn admin status` for a person: the same figures as /metrics, with what stands out said. */
export function describeStatus(s: OperationalStatus): string {
  const age = s.intake.pending === 0 ? 'none waiting' : `oldest ${s.intake.oldest_seconds.toFixed(1)} s`;
  const lines = [
    `error intake: ${s.intake.pending} pending (${age}), ${s.intake.leased} claimed by workers`,
    ...(s.environments.length > 0
      ? [
          'busiest environments (pending / max_pending):',
          ...s.environments.map(
            (e) =>
              `  ${e.name}  ${e.pending} / ${e.max_pending}${e.pending >= e.max_pending ? '  refusing captures (429)' : ''}`,
          ),
        ]
      : []),
    `dead letters: ${s.dead_letters}`,
    `restore drills failed: ${s.backup_drills_failed}${s.backup_drills_failed > 0 ? '  (see `cairn backups list` in each environment)' : ''}`,
    'job queues (queued / active / failed):',
    ...s.queues.map(
      (q) =>
        `  ${q.name.padEnd(26)} ${String(q.queued).padStart(6)} ${String(q.active).padStart(6)} ${String(q.failed).padStart(6)}`,
    ),
  ];
  if (s.environments.some((e) => e.pending >= e.max_pending))
    lines.push(
      'note: an environment is over its max_pending and its captures are refused until workers catch up (docs/operations.md)',
    );
  if (s.intake.oldest_seconds > 60)
    lines.push('note: events have waited over a minute; are the workers running? (docs/operations.md)');
  return lines.join('\n');
}

const ageUnits: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };

/** `30d`, `12h`, `90m`, `45s` in milliseconds. */
export function parseAge(value: string): number {
  const m = /^(\d{1,6})([dhms])$/.exec(value.trim());
  if (!m) throw new CliError(`--older-than takes a number and a unit, such as 30d, 12h, 90m or 45s (got "${value}")`);
  return Number(m[1]) * ageUnits[m[2]!]!;
}

const modeOption = (value: string): 'test' | 'live' => {
  if (value !== 'test' && value !== 'live') throw new CliError('--mode is test or live');
  return value;
};

/** `cairn admin env create` and `set-database`. */
function registerEnv(admin: Command, ctx: CliContext): void {
  const env = admin.command('env').description('environments');
  env
    .command('create')
    .description('create an environment (and its org and project where missing) with a publishable and a secret key')
    .argument('<name>', 'orgs/{org}/projects/{project}/envs/{env}')
    .option('--mode <mode>', 'test or live', modeOption, 'test')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { mode: 'test' | 'live'; json?: boolean }) => {
      requireEnvPath(name);
      const { db, config, keyring } = await ctx.admin();
      const created = await createEnvWithKeys(db, name, opts.mode, keyring());
      const { publicKey, projectNumber } = created.clientKey;
      const out = {
        name: created.env.name,
        mode: created.env.mode,
        publishable_key: created.publishableKey,
        secret_key: created.secretKey,
        dsn: dsnFor(config.CAIRN_BASE_URL, publicKey, projectNumber),
      };
      ctx.print(
        out,
        Boolean(opts.json),
        (o: typeof out) =>
          `${created.created ? 'Created' : 'New keys for'} ${o.name} (${o.mode})\n  publishable key: ${o.publishable_key}\n  secret key:      ${o.secret_key}\n  Sentry DSN:      ${o.dsn}\nThe secret key is shown once; store it now.`,
      );
    });
  registerSetDatabase(env, ctx);
}

/** `cairn admin console-link`. */
function registerConsoleLink(admin: Command, ctx: CliContext): void {
  admin
    .command('console-link')
    .description('print a one-use link (valid 5 minutes) that opens the console of an environment with every scope')
    .requiredOption('--env <name>', 'environment name')
    .option('--json', 'print JSON ({"url", "expire_time"})')
    .action(async (opts: { env: string; json?: boolean }) => {
      const { config, db } = await ctx.admin();
      const row = await requireEnv(db, opts.env);
      const link = await createConsoleLink(db, config.CAIRN_BASE_URL, row.id, null);
      ctx.print(link, Boolean(opts.json), (l: ConsoleLink) => l.url);
    });
}

/** `cairn admin status`. */
function registerStatus(admin: Command, ctx: CliContext): void {
  admin
    .command('status')
    .description(
      'what an operator watches: the error intake, dead letters, job queues and failed restore drills (the figures of GET /metrics)',
    )
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const { config, db } = await ctx.admin();
      const boss = createBoss(config, 'web', { max: 1 });
      await boss.start();
      try {
        const status = await readStatus(db, boss, Object.keys(queues));
        ctx.print(status, Boolean(opts.json), describeStatus);
      } finally {
        await boss.stop({ graceful: false, close: true });
      }
    });
}

/** `cairn admin errors prune`. */
function registerErrorsPrune(admin: Command, ctx: CliContext): void {
  admin
    .command('errors')
    .description('error tracking')
    .command('prune')
    .description("delete events past their environment's retention, and groups left without events")
    .option('--env <name>', 'one environment only')
    .option('--older-than <age>', 'everything received longer ago than this, e.g. 30d, 12h, 90m, 45s')
    .option('--json', 'print JSON')
    .action(async (opts: { env?: string; olderThan?: string; json?: boolean }) => {
      const { db } = await ctx.admin();
      const envId = opts.env ? (await requireEnv(db, opts.env)).id : undefined;
      const olderThanMs = opts.olderThan === undefined ? undefined : parseAge(opts.olderThan);
      ctx.progress('pruning…');
      const result = await pruneErrors(db, new Date(), {
        ...(envId ? { envId } : {}),
        ...(olderThanMs !== undefined ? { olderThanMs } : {}),
      });
      ctx.print(
        result,
        Boolean(opts.json),
        (r: typeof result) => `deleted ${r.deleted_events} events and ${r.deleted_groups} groups`,
      );
    });
}

/** `cairn admin keys create`. */
function registerKeyCreate(keys: Command, ctx: CliContext): void {
  keys
    .command('create')
    .description('create a secret key (or, with --publishable, a publishable key)')
    .requiredOption('--env <name>', 'environment name')
    .option('--scopes <list>', 'comma-separated scopes (default: all)')
    .option('--publishable', 'create a publishable key instead')
    .option('--json', 'print JSON')
    .action(async (opts: { env: string; scopes?: string; publishable?: boolean; json?: boolean }) => {
      const { db } = await ctx.admin();
      const row = await requireEnv(db, opts.env);
      const scopes = opts.scopes
        ? checkScopes(
            opts.scopes
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
          )
        : undefined;
      const created = await createKey(db, row, opts.publishable ? 'publishable' : 'secret', scopes);
      const out = {
        id: created.key.id,
        [opts.publishable ? 'publishable_key' : 'secret_key']: created.token,
        scopes: created.key.scopes,
      };
      ctx.print(
        out,
        Boolean(opts.json),
        () => `${created.key.id}  ${created.token}\nscopes: ${created.key.scopes.join(' ')}\nShown once; store it now.`,
      );
    });
}

/** `cairn admin keys list` and `revoke`. */
function registerKeyListing(keys: Command, ctx: CliContext): void {
  keys
    .command('list')
    .description('list the keys of an environment (hints only; keys are stored hashed)')
    .requiredOption('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (opts: { env: string; json?: boolean }) => {
      const { db } = await ctx.admin();
      const row = await requireEnv(db, opts.env);
      const list = (await tenancyQueries(db).listKeys(row.id)).map((k) => ({
        id: k.id,
        kind: k.kind,
        hint: k.hint,
        scopes: k.scopes,
        create_time: k.create_time.toISOString(),
        revoke_time: k.revoke_time?.toISOString() ?? null,
      }));
      ctx.print(
        { keys: list },
        Boolean(opts.json),
        (o: { keys: typeof list }) =>
          o.keys
            .map((k) => `${k.id}  ${k.kind.padEnd(11)} ${k.hint}  ${k.revoke_time ? 'revoked' : k.scopes.join(',')}`)
            .join('\n') || 'no keys',
      );
    });
  keys
    .command('revoke')
    .description('revoke a key; it stops working at once')
    .argument('<id>', 'key id (key_…)')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      const { db } = await ctx.admin();
      const row = await tenancyQueries(db).revokeKey(id);
      if (!row) throw new CliError(`no key ${id}; list keys with \`cairn admin keys list --env …\``);
      ctx.print(
        { id: row.id, revoke_time: row.revoke_time?.toISOString() },
        Boolean(opts.json),
        () => `revoked ${row.id}`,
      );
    });
}

export function registerAdmin(program: Command, ctx: CliContext): Command {
  const admin = program.command('admin').description('operator commands; they use DATABASE_URL directly');
  registerEnv(admin, ctx);
  registerDemoDatabase(admin, ctx);
  registerConsoleLink(admin, ctx);
  registerStatus(admin, ctx);
  registerErrorsPrune(admin, ctx);
  const keys = admin.command('keys').description('API keys');
  registerKeyCreate(keys, ctx);
  registerKeyListing(keys, ctx);
  return admin;
}

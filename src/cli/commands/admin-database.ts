// `cairn admin env set-database` and `cairn admin demo-database`: the database an environment's
// backups dump and its restores replace. The URL is checked before it is stored (a connection
// with a 5 s deadline, domain/backups/setup/check.ts) and never printed: its password is the
// operator's secret, so messages name only its user, host, port and database.
import type { Command } from 'commander';
import { AppError } from '../../app-error.ts';
import { seal } from '../../crypto.ts';
import { checkDatabaseUrl } from '../../domain/backups/setup/check.ts';
import { ensureDemoDatabase } from '../../domain/backups/setup/demo.ts';
import type { RoleAbilities } from '../../domain/backups/setup/queries.ts';
import { requireEnv } from '../../domain/tenancy/envs.ts';
import { tenancyQueries } from '../../domain/tenancy/queries.ts';
import { CliError, type CliContext } from '../context.ts';

/** Checks `url`, then seals and stores it; a failed check says what is wrong and its code. */
async function setDatabase(ctx: CliContext, name: string, url: string, check: boolean): Promise<RoleAbilities | null> {
  const { db, keyring } = await ctx.admin();
  const row = await requireEnv(db, name);
  const sealing = keyring();
  let abilities: RoleAbilities | null = null;
  if (check) {
    try {
      abilities = await checkDatabaseUrl(url);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const problem = String(err.details?.problem ?? err.code);
      throw new CliError(
        `${err.message}\n  (${problem}; nothing was stored. --no-check stores a URL this machine cannot reach)`,
      );
    }
  }
  await tenancyQueries(db).setDatabaseUrl(row.id, seal(sealing, url, `env-database:${row.id}`));
  return abilities;
}

function describeSet(name: string, a: RoleAbilities | null): string {
  if (!a) return `database set for ${name} (not checked)`;
  const lines = [
    `database set for ${name}: database "${a.database}" as role "${a.role}" (PostgreSQL ${a.server_version})`,
  ];
  if (!a.createdb)
    lines.push(
      `note: role "${a.role}" lacks CREATEDB, which restore drills need (they restore into a scratch database); grant it (ALTER ROLE "${a.role}" CREATEDB) or turn drills off: cairn backups settings --drills off --env ${name}`,
    );
  return lines.join('\n');
}

export function registerSetDatabase(env: Command, ctx: CliContext): void {
  env
    .command('set-database')
    .description(
      "set the environment's application database (the one backups dump and restore); checked by connecting, stored encrypted",
    )
    .argument('<name>', 'environment name')
    .argument('<url>', 'postgres://user:password@host:5432/database')
    .option('--no-check', 'store the URL without connecting to it (a database only the workers can reach)')
    .action(async (name: string, url: string, opts: { check: boolean }) => {
      if (!/^postgres(ql)?:\/\//.test(url))
        throw new CliError('the database URL must start with postgres:// or postgresql://');
      ctx.progress(describeSet(name, await setDatabase(ctx, name, url, opts.check)));
    });
}

export function registerDemoDatabase(admin: Command, ctx: CliContext): void {
  admin
    .command('demo-database')
    .description(
      "create a small sample database (a shop: customers, products, orders) on the service's own Postgres server and set it as the environment's database",
    )
    .requiredOption('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (opts: { env: string; json?: boolean }) => {
      const { config, db } = await ctx.admin();
      const row = await requireEnv(db, opts.env);
      const demo = await ensureDemoDatabase(config.DATABASE_URL, row.id);
      const abilities = await setDatabase(ctx, opts.env, demo.url, true);
      const out = { env: opts.env, database: demo.name, created: demo.created, rows: demo.rows };
      ctx.print(out, Boolean(opts.json), (o: typeof out) =>
        [
          `${o.created ? 'created' : 'kept the existing'} sample database ${o.database}: ${Object.entries(o.rows)
            .map(([t, n]) => `${t} ${n} rows`)
            .join(', ')}`,
          describeSet(o.env, abilities),
          `next: npx cairn backups create --env ${o.env}`,
        ].join('\n'),
      );
    });
}

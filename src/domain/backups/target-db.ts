// Sessions on an environment's own database (not Cairn's), each named as the work it is part of
// (a backup, a drill, a restore), as pg_stat_activity shows it.
import pg from 'pg';
import { AppError } from '../../app-error.ts';
import { keyringFromConfig, open } from '../../crypto.ts';
import type { BackupDeps } from './deps.ts';
import type { EnvTarget } from './queries.ts';

/** The environment's application database URL, sealed by `cairn admin env set-database`. */
export function databaseUrlOf(deps: Pick<BackupDeps, 'config'>, env: EnvTarget): string {
  if (!env.database_url_enc) {
    throw new AppError(
      'conflict',
      `${env.name} has no database; the operator sets one with \`cairn admin env set-database ${env.name} <url>\``,
    );
  }
  return open(keyringFromConfig(deps.config), env.database_url_enc, `env-database:${env.id}`).toString('utf8');
}

export async function connectTarget(url: string, application_name: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name, connectionTimeoutMillis: 10_000 });
  await client.connect();
  return client;
}

/** Runs `fn` in a session of its own, ended whatever `fn` does. */
export async function onTarget<T>(
  url: string,
  application_name: string,
  fn: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = await connectTarget(url, application_name);
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

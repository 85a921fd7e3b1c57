// `cairn admin demo-database`: a small sample database for a newcomer's first backup and restore,
// made on the server that holds the service's own database (the embedded one under `npm start`)
// with the service's own role, so it needs no role, password or server of its own. One per
// environment (named after its id), kept as it is when it already exists: a restore replaces its
// contents, and running the command again must not undo what the newcomer is trying out.
import pg from 'pg';
import { AppError } from '../../../app-error.ts';
import { createDatabase, databaseExists, demoCounts, dropDatabase, seedDemo } from './queries.ts';

export interface DemoDatabase {
  name: string;
  url: string;
  created: boolean;
  /** Rows per table as it is now. */
  rows: Record<string, number>;
}

export const demoDatabaseName = (envId: string): string =>
  `cairn_demo_${envId.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`.slice(0, 63);

function onDatabase(serviceUrl: string, name: string): string {
  const u = new URL(serviceUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'cairn-demo-database' });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function create(serviceUrl: string, name: string): Promise<boolean> {
  return withClient(serviceUrl, async (c) => {
    if (await databaseExists(c, name)) return false;
    try {
      await createDatabase(c, name);
    } catch (err) {
      if ((err as { code?: string }).code === '42501')
        throw new AppError(
          'forbidden',
          "the service database's role may not create databases (no CREATEDB); create a database yourself and set it with `cairn admin env set-database <env> <url>`",
          { details: { problem: 'createdb_missing' } },
        );
      throw err;
    }
    return true;
  });
}

/** Creates and fills the sample database of `envId` where missing; answers where it is. */
export async function ensureDemoDatabase(serviceUrl: string, envId: string): Promise<DemoDatabase> {
  const name = demoDatabaseName(envId);
  const url = onDatabase(serviceUrl, name);
  const created = await create(serviceUrl, name);
  if (created) {
    try {
      await withClient(url, seedDemo);
    } catch (err) {
      // Half a sample is worse than none: the next run makes it again.
      await withClient(serviceUrl, (c) => dropDatabase(c, name)).catch(() => undefined);
      throw err;
    }
  }
  const rows = await withClient(url, demoCounts).catch(() => ({}));
  return { name, url, created, rows };
}

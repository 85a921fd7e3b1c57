// What the CLI prints when a command fails: the cause, then the next step. The API's own answers
// carry a code and a message; what only the CLI can know (which variable held the key, where the
// database setting came from, how to start the service) is added here.
import { databaseTlsHint } from '../db-errors.ts';
import { CairnApiError, CairnConnectionError } from '../sdk/client.ts';

export class CliError extends Error {}

/** Where an admin command's database setting came from, for the hint when it cannot connect. */
export type DbSource = 'DATABASE_URL' | 'npm start';

interface PgError {
  code?: string;
  address?: string;
  port?: number;
  message?: string;
}

/** A Postgres or socket error of an admin command's database, or undefined for anything else. */
function databaseFailure(err: unknown, source: DbSource | undefined): string | undefined {
  if (!source || typeof err !== 'object' || err === null) return undefined;
  const e = err as PgError;
  const fix =
    source === 'DATABASE_URL'
      ? 'check DATABASE_URL (the database the service runs with) and that its Postgres is up'
      : 'that is the embedded database `npm start` runs from this folder: start it with `npm start` (or set DATABASE_URL)';
  const where = e.address ? ` at ${e.address}${e.port ? `:${e.port}` : ''}` : '';
  switch (e.code) {
    case 'ECONNREFUSED':
      return `error: could not connect to the service database${where} (connection refused).\n  ${fix}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `error: the service database's host does not resolve.\n  ${fix}`;
    case '28000':
    case '28P01': {
      const tls = databaseTlsHint(err);
      if (tls) return `error: ${e.message ?? 'the database refused the connection'}.\n  ${tls}`;
      return `error: the service database refused the user or password in ${source === 'DATABASE_URL' ? 'DATABASE_URL' : '.data/cairn.env'}.\n  ${fix}`;
    }
    case '3D000':
      return `error: ${e.message ?? 'the database does not exist'}.\n  ${fix}`;
    case '42P01':
      return `error: the database has no Cairn tables yet (${e.message ?? 'missing table'}).\n  Run the release phase first: npm run migrate (with the same DATABASE_URL).`;
    default: {
      const tls = databaseTlsHint(err);
      return tls ? `error: ${e.message ?? 'the database refused the connection'}.\n  ${tls}` : undefined;
    }
  }
}

function apiHint(err: CairnApiError): string {
  if (err.status === 401)
    return '\n  The API refused CAIRN_SECRET_KEY: use a cairn_sk_… secret key of this environment (`npm start` prints the demo one; `npx cairn admin keys create --env <env name>` makes one).';
  if (err.status === 403)
    return "\n  CAIRN_SECRET_KEY is valid but may not do this: check --env (a key reaches only its own environment) and the key's scopes (`npx cairn admin keys list --env <env name>`).";
  return '';
}

export function describeError(err: unknown, dbSource?: DbSource): string {
  if (err instanceof CairnConnectionError)
    return `error: ${err.message}.\n  Start the service with \`npm start\` (it listens on http://localhost:3000), or set CAIRN_API_URL to where it runs.`;
  if (err instanceof CairnApiError) {
    return `error: ${err.message} (${err.code}, HTTP ${err.status}${err.requestId ? `, request ${err.requestId}` : ''})${apiHint(err)}`;
  }
  if (err instanceof CliError) return `error: ${err.message}`;
  if (err instanceof Error && err.name === 'ConfigError') return err.message;
  if (err instanceof Error && 'code' in err && err.name === 'AppError') return `error: ${err.message}`;
  const db = databaseFailure(err, dbSource);
  if (db) return db;
  return `error: ${err instanceof Error ? err.message || err.name : String(err)}`;
}

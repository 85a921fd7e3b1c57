// The check `cairn admin env set-database` runs before it stores a URL: connect with a short
// deadline and ask the role what it may do, so a typo or a missing role is said at once, not by
// the first backup hours later. No address rule applies: only the operator sets this URL, with
// the service's key and database at hand, and it is normally private (docs/operations.md).
import pg from 'pg';
import { AppError } from '../../../app-error.ts';
import { databaseProblem } from './problems.ts';
import { roleAbilities, type RoleAbilities } from './queries.ts';

const deadlineMs = 5_000;

/** Answers what the URL's role may do, or throws an AppError whose `details.problem` says what is wrong. */
export async function checkDatabaseUrl(url: string): Promise<RoleAbilities> {
  if (!/^postgres(ql)?:\/\//.test(url) || !URL.canParse(url))
    throw new AppError('invalid_request', 'the database URL must be a postgres:// or postgresql:// URL', {
      details: { problem: 'not_a_url' },
    });
  const client = new pg.Client({
    connectionString: url,
    application_name: 'cairn-database-check',
    connectionTimeoutMillis: deadlineMs,
    statement_timeout: deadlineMs,
  });
  // A failure after connect (the server ends the session) must not throw outside this call.
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await roleAbilities(client);
  } catch (err) {
    throw databaseProblem(url, err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

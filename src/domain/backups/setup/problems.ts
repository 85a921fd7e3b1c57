// Why an environment's database URL did not connect, in words the operator can act on, with a
// stable code each (docs/api.md "cairn admin env set-database"). Postgres names the case by its
// SQLSTATE (Appendix A of its manual: 28000 invalid authorization, 28P01 invalid password, 3D000
// invalid catalog name); the socket's own failures come as Node's errno codes. Messages name the
// URL's user, host, port and database, never its password, and never echo the URL itself.
import { AppError } from '../../../app-error.ts';

export type DatabaseProblem =
  | 'role_missing'
  | 'password_failed'
  | 'access_refused'
  | 'tls_required'
  | 'tls_unsupported'
  | 'database_missing'
  | 'connection_refused'
  | 'host_not_found'
  | 'timed_out'
  | 'unreachable';

interface PgFailure {
  code?: string;
  message?: string;
}

/** The parts of a URL that may be shown: never the password. */
export function urlParts(url: string): { user: string; host: string; port: string; database: string } {
  const u = new URL(url);
  return {
    user: decodeURIComponent(u.username) || '(none given)',
    host: u.hostname || 'localhost',
    port: u.port || '5432',
    database: decodeURIComponent(u.pathname.replace(/^\//, '')) || decodeURIComponent(u.username),
  };
}

function classify(err: PgFailure): DatabaseProblem {
  const message = err.message ?? '';
  switch (err.code) {
    case '28P01':
      return 'password_failed';
    case '28000':
      if (/role .* does not exist/i.test(message)) return 'role_missing';
      if (/no encryption|SSL off/i.test(message)) return 'tls_required';
      return 'access_refused';
    case '3D000':
      return 'database_missing';
    case 'ECONNREFUSED':
      return 'connection_refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host_not_found';
    case 'ETIMEDOUT':
      return 'timed_out';
  }
  // node-postgres' connectionTimeoutMillis rejects with a plain Error of its own.
  if (/timeout/i.test(message)) return 'timed_out';
  if (/does not support SSL connections/i.test(message)) return 'tls_unsupported';
  // A password-less URL on a server that asks for one: node-postgres fails before sending anything.
  if (/password must be a string|client password/i.test(message)) return 'password_failed';
  return 'unreachable';
}

function explain(problem: DatabaseProblem, p: ReturnType<typeof urlParts>, err: PgFailure): string {
  const server = `${p.host}:${p.port}`;
  switch (problem) {
    case 'role_missing':
      return `the role "${p.user}" does not exist on ${server}. Put an existing role in the URL, or create it there: CREATE ROLE "${p.user}" LOGIN PASSWORD '…'`;
    case 'password_failed':
      return `${server} refused the password of role "${p.user}" (or the URL has none and the server asks for one). Put the role's password in the URL: postgres://${p.user}:<password>@${server}/${p.database}`;
    case 'access_refused':
      return `${server} refused role "${p.user}" on database "${p.database}" (pg_hba.conf has no line that admits it from here): ${err.message ?? 'no message'}`;
    case 'tls_required':
      return `${server} accepts only TLS connections: add ?sslmode=require (or sslmode=no-verify for a certificate no public CA signs) to the URL`;
    case 'tls_unsupported':
      return `${server} has no TLS: remove sslmode from the URL (and unset PGSSLMODE)`;
    case 'database_missing':
      return `the database "${p.database}" does not exist on ${server}. Create it (createdb -h ${p.host} -p ${p.port} -U ${p.user} ${p.database}), or name an existing one in the URL; \`cairn admin demo-database\` makes a sample one`;
    case 'connection_refused':
      return `nothing accepts connections at ${server}: is Postgres running there, and is that its port?`;
    case 'host_not_found':
      return `the host "${p.host}" does not resolve: check its spelling in the URL`;
    case 'timed_out':
      return `${server} did not answer in time: check the host and port, and that a firewall lets this machine reach it`;
    case 'unreachable':
      return `could not use the database at ${server}: ${err.message ?? 'no message'}`;
  }
}

/** An AppError for a URL that did not connect: `details.problem` is the stable code. */
export function databaseProblem(url: string, err: unknown): AppError {
  const failure = (typeof err === 'object' && err !== null ? err : { message: String(err) }) as PgFailure;
  const problem = classify(failure);
  return new AppError('invalid_request', explain(problem, urlParts(url), failure), { details: { problem } });
}

// What to do when Cairn's own database refuses it for a reason the operator fixes with a setting:
// the next step for a process that cannot start (bin/process.js, the release phase) and for the
// CLI's admin commands (cli/errors.ts). Postgres names the case in its message (SQLSTATE 28000
// covers every pg_hba refusal), so the message is matched, not only the code.
interface PgError {
  code?: string;
  message?: string;
}

export function databaseTlsHint(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, message = '' } = err as PgError;
  // pg_hba.conf has only `hostssl` lines for us: the server wants TLS (Heroku Postgres does).
  if (code === '28000' && /no encryption|SSL off/i.test(message))
    return 'the database accepts only TLS connections: set PGSSLMODE=no-verify (Heroku Postgres, whose certificates no public CA signs) or PGSSLMODE=require, or add ?sslmode=… to DATABASE_URL';
  // We asked for TLS and the server has none (a local Postgres with PGSSLMODE set for Heroku).
  if (/does not support SSL connections/i.test(message))
    return 'the database has no TLS: unset PGSSLMODE (or remove sslmode from DATABASE_URL) for this server';
  return undefined;
}

// Finding pg_dump and psql, and the version rule: pg_dump refuses a server of a newer major
// version ("aborting because of server version mismatch", PostgreSQL docs, pg_dump Notes), so we
// check first and say which two versions disagree and what to install.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AppError } from '../../app-error.ts';

const run = promisify(execFile);

export interface PgVersion {
  major: number;
  text: string;
}

/** "pg_dump (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)" → 15 / "15.20". */
export function parseToolVersion(output: string): PgVersion | undefined {
  const m = /\(PostgreSQL\)\s+(\d+)(?:\.(\d+))?/.exec(output);
  if (!m) return undefined;
  return { major: Number(m[1]), text: m[2] === undefined ? m[1]! : `${m[1]}.${m[2]}` };
}

/** server_version_num 150020 → 15 / "15.20"; 90624 → 9 / "9.6.24". */
export function parseServerVersionNum(num: number): PgVersion {
  if (num >= 100000) return { major: Math.floor(num / 10000), text: `${Math.floor(num / 10000)}.${num % 10000}` };
  const major = Math.floor(num / 10000);
  const minor = Math.floor(num / 100) % 100;
  return { major, text: `${major}.${minor}.${num % 100}` };
}

/** Throws a clear error when pg_dump is older than the server's major version. */
export function checkDumpVersion(dump: PgVersion, server: PgVersion): void {
  if (dump.major < server.major) {
    throw new AppError(
      'INVALID_STATE',
      `pg_dump ${dump.text} is older than the database server (PostgreSQL ${server.text}); install pg_dump ${server.major} or newer on the worker`,
      {
        details: { pg_dump_version: dump.text, server_version: server.text },
      },
    );
  }
}

/** Debian keeps each major's tools in /usr/lib/postgresql/<major>/bin; the newest dumps every older server. */
export function candidateBinDirs(root = '/usr/lib/postgresql'): string[] {
  let majors: string[] = [];
  try {
    majors = readdirSync(root).filter((d) => /^\d+$/.test(d));
  } catch {
    // no Debian layout: PATH only
  }
  return majors.sort((a, b) => Number(b) - Number(a)).map((m) => join(root, m, 'bin'));
}

export interface PgTool {
  path: string;
  version: PgVersion;
}

const cache = new Map<string, Promise<PgTool>>();

/** The newest `pg_dump` or `psql` on this machine. */
export function findTool(name: 'pg_dump' | 'psql'): Promise<PgTool> {
  let found = cache.get(name);
  if (!found) {
    found = (async () => {
      const paths = [
        ...candidateBinDirs()
          .map((d) => join(d, name))
          .filter((p) => existsSync(p)),
        name,
      ];
      for (const path of paths) {
        try {
          const { stdout } = await run(path, ['--version']);
          const version = parseToolVersion(stdout);
          if (version) return { path, version };
        } catch {
          // try the next one
        }
      }
      throw new AppError(
        'INVALID_STATE',
        `${name} is not installed on the worker; install the PostgreSQL client tools`,
      );
    })();
    cache.set(name, found);
    found.catch(() => cache.delete(name));
  }
  return found;
}

/**
 * The child-process environment for a libpq tool: the URL without its password on the command
 * line (visible in `ps`), the password in PGPASSWORD, and nothing else of ours (no AWS keys).
 */
export function libpqInvocation(url: string, appName: string): { dbname: string; env: NodeJS.ProcessEnv } {
  const parsed = new URL(url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = '';
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    PGAPPNAME: appName,
    PGCONNECT_TIMEOUT: '10',
    LC_ALL: 'C',
  };
  if (password) env.PGPASSWORD = password;
  return { dbname: parsed.toString(), env };
}

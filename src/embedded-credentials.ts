// The superuser credentials of `npm start`'s embedded Postgres. Every process on the machine can
// reach its port and its socket, and a superuser can read every table and run programs through
// `COPY … PROGRAM`, so the password is no constant: a random one is made at the first start and
// kept in a file only the user running `npm start` may read (0600). Every connection proves it
// with SCRAM-SHA-256 (RFC 7677; Postgres' pg_hba `scram-sha-256`), never sends it in the clear
// (the `password` method) and is never waved through (`trust`). A cluster made by an older version
// still has the fixed password `postgres`: it is moved to the file's password at its next start.
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { chmod, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';

/** What clusters made before the password file had, and what a start moves them off. */
export const legacyPassword = 'postgres';

/** The password kept in `file`, made (and the file written, 0600) at the first start. */
export async function embeddedPassword(file: string): Promise<string> {
  const kept = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (kept?.trim()) {
    // A copy or a restore may have widened it.
    await chmod(file, 0o600);
    return kept.trim();
  }
  // URL-safe, so it sits in DATABASE_URL as it is.
  const password = randomBytes(24).toString('base64url');
  const staging = `${file}.tmp-${randomBytes(6).toString('hex')}`;
  await writeFile(staging, `${password}\n`, { mode: 0o600, flag: 'wx' });
  await rename(staging, file);
  return password;
}

/**
 * The SCRAM-SHA-256 verifier Postgres stores for `password` (RFC 5802 §3, RFC 7677), made here so
 * that the password itself never travels in a statement the server could log (as psql's
 * \password does). For ASCII passwords, as ours are: SASLprep leaves those as they are.
 */
export function scramVerifier(password: string, salt = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest();
  const storedKey = createHash('sha256').update(hmac(salted, 'Client Key')).digest();
  const serverKey = hmac(salted, 'Server Key');
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** The embedded cluster's pg_hba.conf: SCRAM for every connection, socket and loopback alike. */
export const hbaRules = `# Written by npm start at each start. Every connection proves the password with SCRAM-SHA-256;
# the password is in .data/postgres-password, readable by the user who runs npm start.
# TYPE  DATABASE     USER  ADDRESS       METHOD
local   all          all                 scram-sha-256
host    all          all   127.0.0.1/32  scram-sha-256
host    all          all   ::1/128       scram-sha-256
local   replication  all                 scram-sha-256
host    replication  all   127.0.0.1/32  scram-sha-256
host    replication  all   ::1/128       scram-sha-256
`;

/** Server flags: a password set later (ALTER ROLE … PASSWORD 'plain') is stored as SCRAM too. */
export const postgresAuthFlags = ['-c', 'password_encryption=scram-sha-256'];

async function connectAs(port: number, password: string): Promise<pg.Client | undefined> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
  try {
    await client.connect();
    return client;
  } catch (err) {
    await client.end().catch(() => undefined);
    // 28P01 invalid_password: not this password; anything else is a real failure.
    if ((err as { code?: string }).code === '28P01') return undefined;
    throw err;
  }
}

/**
 * An admin session on the running cluster with the kept password, the cluster moved onto it first
 * when it still has the legacy one; then pg_hba.conf made SCRAM-only (and reloaded) where it is
 * not. Undefined when neither password is accepted.
 */
export async function secureAdminSession(
  port: number,
  databaseDir: string,
  password: string,
  say: (line: string) => void,
): Promise<pg.Client | undefined> {
  let admin = await connectAs(port, password);
  if (!admin) {
    admin = await connectAs(port, legacyPassword);
    if (!admin) return undefined;
    await admin.query(`alter role postgres password ${admin.escapeLiteral(scramVerifier(password))}`);
    say('The embedded Postgres had the old fixed password: it now has the one in .data/postgres-password.');
  }
  const hbaFile = join(databaseDir, 'pg_hba.conf');
  if ((await readFile(hbaFile, 'utf8')) !== hbaRules) {
    // Written in place: as root the file is the postgres user's, and stays so.
    await writeFile(hbaFile, hbaRules);
    await admin.query('select pg_reload_conf()');
    const bad = await admin.query<{ error: string }>(
      'select error from pg_hba_file_rules where error is not null limit 1',
    );
    if (bad.rows[0]) throw new Error(`the embedded Postgres refused its pg_hba.conf: ${bad.rows[0].error}`);
  }
  return admin;
}

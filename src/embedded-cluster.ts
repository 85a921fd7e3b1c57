// The embedded Postgres cluster of `npm start`: where its files live, its first initdb, its start,
// its credentials (embedded-credentials.ts) and the `cairn` database, answered as a DATABASE_URL.
import { existsSync } from 'node:fs';
import { mkdir, readlink, symlink } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { embeddedPassword, postgresAuthFlags, secureAdminSession } from './embedded-credentials.ts';
import {
  createEmbeddedPostgres,
  ensureReachableRoot,
  initialiseCluster,
  reachableByOthers,
  reachableRoot,
} from './embedded-postgres.ts';
import { StartError } from './start-error.ts';

type Say = (line: string) => void;

/**
 * Where the embedded cluster keeps its files: `.data/postgres`, unless we run as root inside a
 * folder the `postgres` user cannot reach (root's home is 0700; Postgres refuses to run as root,
 * so embedded-postgres runs it as `postgres`). Then the files live in
 * /var/lib/cairn/embedded/<id>/postgres and `.data/postgres` is a symlink to them (the binaries
 * likewise: src/embedded-postgres.ts).
 */
async function postgresDataDir(dataDir: string, say: Say): Promise<string> {
  const local = resolve(dataDir, 'postgres');
  const linked = await readlink(local).catch(() => undefined);
  if (linked) return linked;
  if (existsSync(local) || process.getuid?.() !== 0 || reachableByOthers(dataDir)) return local;
  const id = createHash('sha256').update(dataDir).digest('hex').slice(0, 12);
  const target = `${reachableRoot}/${id}/postgres`;
  await ensureReachableRoot();
  await mkdir(dirname(target), { recursive: true, mode: 0o755 });
  await symlink(target, local);
  say(`${dataDir} is not reachable by the postgres user; keeping the database in ${target}`);
  return target;
}

/**
 * Starts the cluster kept under `dataDir` on 127.0.0.1:`port` and answers the `cairn` database's
 * URL. Its stop joins `stops` as soon as it runs, so a failure further on still stops it.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  port: number,
  say: Say,
  stops: (() => Promise<void>)[],
): Promise<string> {
  const databaseDir = await postgresDataDir(dataDir, say);
  const passwordFile = resolve(dataDir, 'postgres-password');
  const password = await embeddedPassword(passwordFile);
  const server = await createEmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    postgresFlags: postgresAuthFlags,
    persistent: true,
    // Only root needs a `postgres` user to run Postgres as (it refuses to run as root); a normal
    // user runs it as themselves. Asked for as a normal user, embedded-postgres would try to
    // create one (groupadd, useradd) and fail: it looks users up only when run as root.
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
    onError: (e) => say(`postgres: ${String(e)}`),
  });
  if (!existsSync(resolve(databaseDir, 'PG_VERSION'))) {
    say(`Initialising an embedded Postgres in ${databaseDir} (first run only)…`);
    await initialiseCluster(server, databaseDir);
  }
  say(`Starting the embedded Postgres on 127.0.0.1:${port}…`);
  await server.start();
  // embedded-postgres stops every instance itself on SIGTERM and SIGINT (its async-exit-hook), which
  // would cut the worker's and web's connections while they are still stopping. Its hook is left
  // waiting instead: the ordered shutdown (npm start's onShutdown) stops Postgres last and ends the
  // process.
  const stop = server.stop.bind(server);
  server.stop = () => new Promise<void>(() => undefined);
  stops.push(stop);
  const admin = await secureAdminSession(port, databaseDir, password, say);
  if (!admin)
    throw new StartError(
      `the embedded Postgres in ${databaseDir} refused the password in ${passwordFile}.\n` +
        `  If that file was replaced or deleted, put the earlier one back; or move ${databaseDir} away\n` +
        `  to start with an empty database.`,
    );
  try {
    const exists = await admin.query("select 1 from pg_database where datname = 'cairn'");
    if (!exists.rowCount) await admin.query('create database cairn');
  } finally {
    await admin.end();
  }
  return `postgres://postgres:${password}@127.0.0.1:${port}/cairn`;
}

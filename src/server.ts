// The web process: the Koa API on one HTTP server, with a graceful stop (SIGTERM: stop accepting,
// finish in-flight requests, close idle keep-alive sockets, then release the pools).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type AppOptions } from './app/app.ts';
import type { Config } from './config.ts';
import { connectionShares, createDb } from './db.ts';
import { createBoss, Jobs } from './jobs/index.ts';
import { queues } from './queues.ts';
import { intakeWriter } from './domain/errors/intake/writer.ts';
import { createLogger, type Logger } from './log.ts';
import { createObjectStore } from './storage/index.ts';

export interface WebHandle {
  url: string;
  server: Server;
  stop(): Promise<void>;
}

export async function startWeb(
  config: Config,
  options: AppOptions & { log?: Logger; host?: string; port?: number } = {},
): Promise<WebHandle> {
  const log = options.log ?? createLogger({ name: 'web', level: config.LOG_LEVEL });
  const shares = connectionShares(config, 'web');
  const db = createDb(config, { poolMax: shares.knex, applicationName: 'cairn-web', role: 'web' });
  const boss = createBoss(config, 'web', { max: shares.boss });
  boss.on('error', (err: Error & { code?: string }) =>
    log.warn({ code: err.code, message: err.message }, 'pg-boss error'),
  );
  await boss.start();
  const jobs = new Jobs(boss, queues);
  const app = createApp({ config, db, jobs, log, store: createObjectStore(config) }, options);
  const server = createServer(app.callback());
  let stopping = false;
  // While stopping, answers close their connection, so keep-alive clients reconnect elsewhere.
  server.on('request', (_req, res) => {
    if (stopping) res.setHeader('Connection', 'close');
  });
  // Longer than the platform router's idle timeout, so the router closes first (no 502 races).
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? config.PORT, options.host ?? '0.0.0.0', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  log.info({ port }, 'web listening');

  return {
    url,
    server,
    async stop() {
      stopping = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive sockets become idle as their last response ends: close each as it does.
      const sweep = setInterval(() => server.closeIdleConnections(), 100);
      server.closeIdleConnections();
      const deadline = setTimeout(() => server.closeAllConnections(), 20_000);
      await closed;
      clearInterval(sweep);
      clearTimeout(deadline);
      // The pending counts of the last tenth of a second, written before the pool goes: lost, they
      // would read low until the counts are reconciled.
      await intakeWriter(db, jobs).pending.drain();
      await boss.stop({ graceful: false, close: true });
      await db.destroy();
    },
  };
}

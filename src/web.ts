// Procfile `web` (through bin/process.js), or `node src/web.ts`.
import cluster from 'node:cluster';
import { loadConfigOrExit } from './config.ts';
import { createLogger } from './log.ts';
import { startWeb } from './server.ts';
import { onShutdown } from './shutdown.ts';
import { runWebCluster } from './web-cluster.ts';

export async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const log = createLogger({ name: 'web', level: config.LOG_LEVEL });
  if (config.WEB_CONCURRENCY > 1 && cluster.isPrimary) return runWebCluster(config.WEB_CONCURRENCY, log);
  const started = startWeb(config, { log });
  // Before the first await: a SIGTERM during start-up (a deploy, a restart) still stops cleanly.
  onShutdown(log, async () => (await started).stop());
  await started;
}

if (import.meta.main) await main();

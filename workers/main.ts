// Procfile `worker` (through bin/process.js), or `node workers/main.ts`.
import { ConfigError, loadConfigOrExit } from '../src/config.ts';
import { sweepTempDirs } from '../src/domain/backups/restore/fetch.ts';
import { queues, schedules } from '../src/queues.ts';
import { createLogger } from '../src/log.ts';
import { onShutdown } from '../src/shutdown.ts';
import { startWorker } from '../src/worker.ts';
import { handlers } from './handlers.ts';

export async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const log = createLogger({ name: 'worker', level: config.LOG_LEVEL });
  // A restore's temporary folder is named by its worker's pid: those of workers gone from this
  // machine (a restart after a crash) are removed before any job runs.
  await sweepTempDirs().catch((err: unknown) => log.warn({ err }, 'could not sweep temporary folders'));
  const started = startWorker(config, queues, handlers, { log, schedules }).catch((err: unknown) => {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  });
  // Before the first await: a SIGTERM during start-up (a deploy, a restart) still stops cleanly.
  onShutdown(log, async () => (await started).stop());
  await started;
}

if (import.meta.main) await main();

// Heroku sends SIGTERM and kills the process 30 s later; we aim to be gone within 25 s.
import type { Logger } from './log.ts';

export const shutdownDeadlineMs = 25_000;

export function onShutdown(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      log.error('shutdown took longer than 25 s; exiting now');
      process.exit(1);
    }, shutdownDeadlineMs);
    timer.unref();
    stop().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

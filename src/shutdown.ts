// Heroku sends SIGTERM and kills the process 30 s later; we aim to be gone within 25 s.
import type { Logger } from './log.ts';

export const shutdownDeadlineMs = 25_000;

const finalSteps: (() => Promise<void>)[] = [];

/** Work for after the process has stopped and before it exits: telemetry sends its last spans. */
export function onExit(step: () => Promise<void>): void {
  finalSteps.push(step);
}

const runFinalSteps = async (): Promise<void> => {
  await Promise.allSettled(finalSteps.map((step) => step()));
};

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
      async () => {
        log.info('stopped');
        await runFinalSteps();
        process.exit(0);
      },
      async (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        await runFinalSteps();
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

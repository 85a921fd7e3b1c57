// pino, one JSON line per event. Log lines carry ids and codes, never tokens, keys or bodies.
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** `destination`: where the lines go (stdout unless given; `npm start` adds its readable mail view). */
export function createLogger(options: { level?: string; name: string; destination?: DestinationStream }): Logger {
  const settings = {
    name: options.name,
    level: options.level ?? 'info',
    base: { pid: process.pid },
    // Belt and braces: these never belong in a log line even if one is passed by mistake.
    redact: {
      paths: ['authorization', 'password', 'token', 'secret', '*.authorization', '*.password', '*.token', '*.secret'],
      censor: '[Filtered]',
    },
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}

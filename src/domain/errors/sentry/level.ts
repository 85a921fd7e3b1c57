/**
 * The event's level as relay reads it (relay-event-schema/src/protocol/types.rs, `Level`): one of
 * five names (`log` is `info`, `critical` is `fatal`), or Python logging's number (raven-python
 * sends 40); anything else is dropped, never kept as free text.
 */
const eventLevels: Record<string, string> = {
  debug: 'debug',
  info: 'info',
  log: 'info',
  warning: 'warning',
  error: 'error',
  fatal: 'fatal',
  critical: 'fatal',
};
const pythonLevels: Record<number, string> = { 10: 'debug', 20: 'info', 30: 'warning', 40: 'error', 50: 'fatal' };
export function eventLevel(v: unknown): string | undefined {
  if (typeof v === 'number') return pythonLevels[v];
  return typeof v === 'string' && Object.hasOwn(eventLevels, v) ? eventLevels[v] : undefined;
}

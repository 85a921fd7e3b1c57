// Tracing for a process, when the operator asked for it (settings.ts): OpenTelemetry's SDK starts
// before the application's modules load, and its buffered spans go out before the process exits.
// Not asked for: nothing is imported, nothing is patched.
import { onExit } from '../shutdown.ts';
import { tracingWanted } from './settings.ts';

/** `role` names the service (`cairn-web`, `cairn-worker`; `cairn` for npm start) unless OTEL_SERVICE_NAME does. */
export async function startTracingIfWanted(role?: string): Promise<boolean> {
  if (!tracingWanted()) return false;
  const { startTelemetry } = await import('./start.ts');
  const telemetry = await startTelemetry(role);
  onExit(telemetry.shutdown);
  return true;
}

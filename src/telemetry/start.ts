// OpenTelemetry's Node SDK for one process, started before the application's modules load (bin/
// process.js and src/start.ts import this first, and only when tracing is wanted: settings.ts).
//
// - HTTP: a server span per request (the route names it: http/route.ts), continuing the caller's
//   W3C `traceparent`; outgoing calls (S3, webhooks, identity providers) only inside a span. A
//   URL's query keeps its keys, never its values (redact.ts).
// - Database: a span per query, but only inside a request or a job (`requireParentSpan`), so the
//   queue's own polling does not flood the collector. Statements go out without their values.
// - Jobs: src/telemetry/jobs.ts, around each batch a worker runs.
// Everything else (exporter, protocol, headers, sampler, resource) comes from the standard OTEL_*
// variables, which the SDK reads itself. ESM modules are patched through import-in-the-middle's
// loader hook, registered here for only the modules an instrumentation asks for.
import { register } from 'node:module';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { incomingQueryAttributes, outgoingQueryAttributes } from './redact.ts';

/** Paths that only the platform asks for: no span, or a health check every few seconds is a trace. */
const quietPaths = new Set(['/metrics', '/healthz', '/readyz']);

export interface Telemetry {
  /** Sends what is buffered and stops; the shutdown path awaits it. */
  shutdown(): Promise<void>;
}

export async function startTelemetry(role?: string): Promise<Telemetry> {
  // Traces only, unless the operator asks for more: metrics are at /metrics (Prometheus) and logs
  // on stdout (the platform's log drain), so the SDK's own defaults (OTLP for both) would duplicate them.
  process.env.OTEL_METRICS_EXPORTER ??= 'none';
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME || (role ? `cairn-${role}` : 'cairn'),
    instrumentations: [
      new HttpInstrumentation({
        requireParentforOutgoingSpans: true,
        ignoreIncomingRequestHook: (req) => quietPaths.has((req.url ?? '').split('?')[0]!),
        // Query values never reach a span (redact.ts).
        startIncomingSpanHook: incomingQueryAttributes,
        startOutgoingSpanHook: outgoingQueryAttributes,
      }),
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
    ],
  });
  sdk.start();
  await waitForAllMessagesAcknowledged();
  return { shutdown: () => sdk.shutdown() };
}

// pino, one JSON line per event. Log lines carry ids and codes, never tokens, keys or bodies.
import { trace } from '@opentelemetry/api';
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** `destination`: where the lines go (stdout unless given; `npm start` adds its readable mail view). */
export function createLogger(options: { level?: string; name: string; destination?: DestinationStream }): Logger {
  const settings = {
    name: options.name,
    level: options.level ?? 'info',
    base: { pid: process.pid },
    // The active span's ids, under OpenTelemetry's log field names, so a line leads to its trace
    // (https://opentelemetry.io/docs/specs/otel/compatibility/logging_trace_context/). Untraced
    // processes have no active span: nothing is added.
    mixin: traceFields,
    // Belt and braces: these never belong in a log line even if one is passed by mistake.
    redact: {
      paths: ['authorization', 'password', 'token', 'secret', '*.authorization', '*.password', '*.token', '*.secret'],
      censor: '[Filtered]',
    },
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}

function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId, traceFlags } = span.spanContext();
  return { trace_id: traceId, span_id: spanId, trace_flags: `0${traceFlags.toString(16)}`.slice(-2) };
}

// Whether the process traces: only when the operator points it at an OTLP collector with
// OpenTelemetry's own variables (https://opentelemetry.io/docs/specs/otel/protocol/exporter/).
// Unset, nothing of the SDK is loaded and no span is made. OTEL_SDK_DISABLED=true turns it off
// whatever else is set, as the spec's general SDK configuration says.
export function tracingWanted(env: Record<string, string | undefined> = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

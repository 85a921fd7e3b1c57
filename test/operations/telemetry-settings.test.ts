// When a process traces (src/telemetry/settings.ts): only with an OTLP endpoint, and never with
// OTEL_SDK_DISABLED=true (OpenTelemetry's general SDK configuration).
import { describe, expect, it } from 'vitest';
import { tracingWanted } from '../../src/telemetry/settings.ts';

describe('tracingWanted', () => {
  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: ' TRUE ' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'false' }, true],
  ])('%j → %s', (env, wanted) => {
    expect(tracingWanted(env)).toBe(wanted);
  });
});

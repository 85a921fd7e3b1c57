// Traces across the queue: a job carries the W3C trace context of the code that queued it (under
// `_trace` in its data), and the worker runs each batch in a CONSUMER span, a child of that
// context when the batch is one job, linked to each job's context when it is several (OpenTelemetry
// messaging conventions, "Consumer spans": a batch has no single parent).
// With no SDK started the API's propagator injects nothing, so jobs stay exactly as they were.
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';

export const traceKey = '_trace';

type Carrier = Record<string, string>;

/** The current trace context to store with a job, or undefined when there is none. */
export function traceCarrier(): Carrier | undefined {
  const carrier: Carrier = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? carrier : undefined;
}

/** The job's data without the carrier, and the carrier (if any). */
export function splitTrace(data: unknown): { data: unknown; carrier: Carrier | undefined } {
  if (typeof data !== 'object' || data === null || !(traceKey in data)) return { data, carrier: undefined };
  const { [traceKey]: carrier, ...rest } = data as Record<string, unknown>;
  const valid = typeof carrier === 'object' && carrier !== null && !Array.isArray(carrier);
  return { data: rest, carrier: valid ? (carrier as Carrier) : undefined };
}

const tracer = trace.getTracer('cairn.jobs');

/** Runs a batch of `queue` in its span; a thrown error marks the span and passes on unchanged. */
export async function inJobSpan<T>(
  queue: string,
  jobs: readonly { id: string; carrier: Carrier | undefined }[],
  work: () => Promise<T>,
): Promise<T> {
  const contexts = jobs.map((j) => (j.carrier ? propagation.extract(context.active(), j.carrier) : undefined));
  const single = jobs.length === 1 ? contexts[0] : undefined;
  const links: Link[] = [];
  if (!single)
    for (const c of contexts) {
      const linked = c && trace.getSpanContext(c);
      if (linked) links.push({ context: linked });
    }
  const parent: Context = single ?? context.active();
  return tracer.startActiveSpan(
    `process ${queue}`,
    {
      kind: SpanKind.CONSUMER,
      links,
      attributes: {
        'messaging.system': 'pg-boss',
        'messaging.operation.type': 'process',
        'messaging.destination.name': queue,
        'messaging.batch.message_count': jobs.length,
        ...(jobs.length === 1 ? { 'messaging.message.id': jobs[0]!.id } : {}),
      },
    },
    parent,
    async (span: Span) => {
      try {
        return await work();
      } catch (err) {
        span.recordException(err as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

// Traces through OpenTelemetry, end to end: a web and a worker started as the Procfile starts them,
// with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a real OTLP/HTTP receiver here (JSON encoding, so
// the test reads what the SDK sent). A capture that arrives inside the application's trace (its
// `traceparent`) gives, in that same trace: the web's server span named after the route, its
// database spans, the worker's span for the ingest job and the worker's database spans. Log lines
// of the request carry the trace id, and the stored event keeps the application's trace id.
// Without the variable, nothing is traced and no log line has a trace id.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { spawnWeb, spawnWorker, type WebProcess } from '../support/web-process.ts';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  links?: { traceId: string; spanId: string }[];
  attributes?: { key: string; value: Record<string, unknown> }[];
  service: string;
}

const spans: OtlpSpan[] = [];
let receiver: Server;
let endpoint: string;
let h: Harness;
let env: CreatedEnv;
let web: WebProcess;
let worker: Omit<WebProcess, 'url'>;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes?.find((a) => a.key === key)?.value;
  return v ? Object.values(v)[0] : undefined;
};
const SERVER = 2;
const CONSUMER = 5;

beforeAll(async () => {
  // An OTLP/HTTP collector: POST /v1/traces with ExportTraceServiceRequest as JSON.
  receiver = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      let body = Buffer.concat(parts);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      if (req.url === '/v1/traces') {
        const request = JSON.parse(body.toString()) as {
          resourceSpans: {
            resource: { attributes: { key: string; value: { stringValue?: string } }[] };
            scopeSpans: { spans: Omit<OtlpSpan, 'service'>[] }[];
          }[];
        };
        for (const rs of request.resourceSpans) {
          const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
          for (const ss of rs.scopeSpans) for (const s of ss.spans) spans.push({ ...s, service });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  h = await createHarness();
  env = await createTestEnv(h.db);
  const otel = {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    // Export within a fifth of a second instead of five, so the test does not wait.
    OTEL_BSP_SCHEDULE_DELAY: '200',
  };
  [web, worker] = await Promise.all([
    spawnWeb(h.database.url, otel, { procfile: true }),
    spawnWorker(h.database.url, otel, { procfile: true }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([web?.stop(), worker?.stop()]);
  await h?.close();
  await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
});

async function capture(url: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/v1/${env.env.name}/error_groups:capture`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.secretKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({
      error_event: {
        event_time: new Date().toISOString(),
        exception_type: 'TypeError',
        message: 'cart is undefined',
        stack: 'TypeError: cart is undefined\n    at checkout (https://shop.example/app.js:10:5)',
        ...body,
      },
    }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { uid: string }).uid;
}

async function storedEvent(url: string, uid: string) {
  return eventually(
    async () => {
      const res = await fetch(`${url}/v1/${env.env.name}/error_groups/-/error_events/${uid}`, {
        headers: { authorization: `Bearer ${env.secretKey}` },
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { trace_id?: string; span_id?: string };
    },
    { timeoutMs: 20_000 },
  );
}

describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  it("puts the request, its queries, the ingest job and the job's queries in the caller's trace", async () => {
    const traceId = hex(16);
    const callerSpan = hex(8);
    const uid = await capture(web.url, {}, { traceparent: `00-${traceId}-${callerSpan}-01` });
    const event = await storedEvent(web.url, uid);
    // The event keeps the trace it arrived in (no trace_id in its body: the header's).
    expect(event.trace_id).toBe(traceId);
    expect(event.span_id).toBe(callerSpan);

    const trace = await eventually(
      () => {
        const inTrace = spans.filter((s) => s.traceId === traceId);
        expect(inTrace.some((s) => s.service === 'cairn-worker' && s.kind === CONSUMER)).toBe(true);
        expect(inTrace.some((s) => s.service === 'cairn-worker' && attr(s, 'db.system.name') === 'postgresql')).toBe(
          true,
        );
        return inTrace;
      },
      { timeoutMs: 20_000 },
    );
    const server = trace.find((s) => s.service === 'cairn-web' && s.kind === SERVER)!;
    expect(server.name).toBe('POST /v1/orgs/{org}/projects/{project}/envs/{env}/error_groups:capture');
    expect(server.parentSpanId).toBe(callerSpan);
    expect(attr(server, 'http.route')).toBe('/v1/orgs/{org}/projects/{project}/envs/{env}/error_groups:capture');
    const webQueries = trace.filter((s) => s.service === 'cairn-web' && attr(s, 'db.system.name') === 'postgresql');
    expect(webQueries.length).toBeGreaterThan(0);
    // Statements go out without their values.
    const texts = webQueries.map((q) => String(attr(q, 'db.query.text')));
    const keyLookup = texts.find((t) => t.includes('from "api_keys"'));
    expect(keyLookup).toMatch(/"token_hash" = \$1/);
    for (const t of texts) expect(t).not.toContain(env.secretKey);
    const job = trace.find((s) => s.service === 'cairn-worker' && s.kind === CONSUMER)!;
    expect(job.name).toBe('process errors.ingest');
    expect(attr(job, 'messaging.destination.name')).toBe('errors.ingest');
    const jobQueries = trace.filter((s) => s.service === 'cairn-worker' && attr(s, 'db.system.name') === 'postgresql');
    expect(jobQueries.every((q) => q.parentSpanId)).toBe(true);

    // The request's log line carries the trace, so a line leads to its trace and back.
    const lines = web
      .output()
      .split('\n')
      .filter((l) => l.includes('"msg":"request"') && l.includes('error_groups:capture'));
    expect(lines.some((l) => l.includes(`"trace_id":"${traceId}"`))).toBe(true);
  });

  it("keeps an event's own trace id over the request's, and starts a new trace for a request without one", async () => {
    const own = hex(16);
    const header = hex(16);
    const uid = await capture(web.url, { trace_id: own }, { traceparent: `00-${header}-${hex(8)}-01` });
    expect((await storedEvent(web.url, uid)).trace_id).toBe(own);

    const untraced = await capture(web.url, {});
    expect((await storedEvent(web.url, untraced)).trace_id).toBeUndefined();
    // Its request is still traced, as a root span of Cairn's own.
    await eventually(
      () => {
        const roots = spans.filter((s) => s.service === 'cairn-web' && s.kind === SERVER && !s.parentSpanId);
        expect(roots.length).toBeGreaterThan(0);
        return roots;
      },
      { timeoutMs: 10_000 },
    );
  });

  it("keeps a query's keys in a span, never its values (one-use tokens, a raven DSN's secret)", async () => {
    const token = hex(24);
    const secret = hex(16);
    const res = await fetch(`${web.url}/console/sign-in/link?token=${token}&sentry_secret=${secret}&flag`);
    await res.arrayBuffer();
    const span = await eventually(
      () => {
        const s = spans.find((x) => x.service === 'cairn-web' && attr(x, 'url.path') === '/console/sign-in/link');
        expect(s).toBeDefined();
        return s!;
      },
      { timeoutMs: 10_000 },
    );
    expect(attr(span, 'url.query')).toBe('token=REDACTED&sentry_secret=REDACTED&REDACTED');
    const all = JSON.stringify(spans);
    expect(all).not.toContain(token);
    expect(all).not.toContain(secret);
  });

  it('ignores a malformed traceparent (a new trace, the event without a trace id)', async () => {
    const uid = await capture(web.url, {}, { traceparent: `00-${'0'.repeat(32)}-${hex(8)}-01` });
    expect((await storedEvent(web.url, uid)).trace_id).toBeUndefined();
  });
});

describe('without it', () => {
  it('makes no span and writes no trace id', async () => {
    const plain = await spawnWeb(h.database.url, {}, { procfile: true });
    try {
      const consumers = () => spans.filter((s) => s.service === 'cairn-worker' && s.kind === CONSUMER).length;
      const before = consumers();
      const traceId = hex(16);
      const uid = await capture(plain.url, {}, { traceparent: `00-${traceId}-${hex(8)}-01` });
      // The event still keeps the caller's trace id: that is the application's data, not our telemetry.
      expect((await storedEvent(plain.url, uid)).trace_id).toBe(traceId);
      const request = await eventually(() => {
        const line = plain
          .output()
          .split('\n')
          .find((l) => l.includes('"msg":"request"') && l.includes('error_groups:capture'));
        expect(line).toBeDefined();
        return line!;
      });
      expect(request).not.toContain('trace_id');
      expect(plain.output()).not.toContain('"trace_id"');
      // The traced worker stored that event, and its span has come in (a trace of its own, since
      // the untraced web queued the job with no context); nothing is in the caller's trace.
      await eventually(() => consumers() > before, { timeoutMs: 10_000 });
      expect(spans.some((s) => s.traceId === traceId)).toBe(false);
    } finally {
      await plain.stop();
    }
  });
});

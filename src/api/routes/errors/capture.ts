// Capture and batchCapture (docs/api.md): validate, give uids, queue them as jobs in one statement, 202.
import { acceptBatch, acceptEvents, captureDeps } from '../../../domain/errors/intake/capture.ts';
import { defineRoute } from '../../../http/route.ts';
import { itemValue } from '../../../http/json-items.ts';
import { parseTraceparent } from '../../../http/trace-context.ts';
import { limits } from '../../../contract/error-capture.ts';
import {
  batchCaptureBody,
  batchCaptureResponse,
  captureBody,
  captureResponse,
  envParams,
} from '../../../contract/errors.ts';
import { secretKey } from '../route-parts.ts';

const base = '/v1/orgs/{org}/projects/{project}/envs/{env}/error_groups';

/** What both captures are: a POST of free-text events into an environment, by a writing key. */
const intake = {
  method: 'post',
  ...secretKey('Error tracking', 'observability:write'),
  params: envParams,
  freeText: true,
} as const;

export const capture = defineRoute({
  ...intake,
  path: `${base}:capture`,
  operationId: 'captureErrorEvent',
  summary: 'Capture one error event; it is processed and stored in the background',
  body: captureBody,
  example: {
    error_event: {
      event_id: '3f2b8c1d9e4a4b6f8a7c5d2e1f0a9b8c',
      event_time: '2026-11-28T14:03:12.417Z',
      exception_type: 'TypeError',
      message: "Cannot read properties of undefined (reading 'total')",
      stack:
        "TypeError: Cannot read properties of undefined (reading 'total')\n    at Cart.total (https://shop.example.com/assets/app.min.js:1:4821)\n    at https://shop.example.com/assets/app.min.js:1:9137",
      service_name: 'checkout',
      release: 'shop@1.4.0',
      breadcrumbs: [
        { timestamp: '2026-11-28T14:03:11.902Z', category: 'ui.click', level: 'info', message: 'button#pay' },
      ],
      tags: { browser: 'Chrome', tenant: 'acme' },
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      span_id: '00f067aa0ba902b7',
    },
  },
  bodyLimit: 256 * 1024,
  response: {
    status: 202,
    description: 'Accepted; read it back with GET …/error_groups/-/error_events/{uid}',
    schema: captureResponse,
  },
  async handle({ body, principal, deps, ctx }) {
    // An event without its own trace id keeps the one its request arrived in: the application's
    // trace, when its HTTP client propagates W3C trace context (as OpenTelemetry's do).
    const event = body.error_event;
    const caller = event.trace_id === undefined ? parseTraceparent(ctx.get('traceparent')) : undefined;
    if (caller) {
      event.trace_id = caller.traceId;
      event.span_id ??= caller.spanId;
    }
    const [uid] = await acceptEvents(captureDeps(deps), principal.envId, [event]);
    return { uid: uid! };
  },
});

export const batchCapture = defineRoute({
  ...intake,
  path: `${base}:batchCapture`,
  operationId: 'batchCaptureErrorEvents',
  summary: 'Capture up to 1000 error events; each is accepted or refused on its own',
  body: batchCaptureBody,
  example: {
    error_events: [
      {
        event_time: '2026-11-28T14:03:12.417Z',
        exception_type: 'TypeError',
        message: "Cannot read properties of undefined (reading 'total')",
        service_name: 'checkout',
        release: 'shop@1.4.0',
      },
      {
        event_time: '2026-11-28T14:03:15.052Z',
        exception_type: 'RangeError',
        message: 'Invalid time value',
        service_name: 'checkout',
        release: 'shop@1.4.0',
        fingerprint: 'invoice-date',
      },
    ],
  },
  bodyLimit: 20 * 1024 * 1024,
  bodyItems: { key: 'error_events', max: limits.batch },
  response: { status: 202, description: 'One result per event, in order', schema: batchCaptureResponse },
  async handle({ body, principal, deps }) {
    return { results: await acceptBatch(captureDeps(deps), principal.envId, body.error_events, itemValue) };
  },
});

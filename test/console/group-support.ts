// Sentry SDK events for the group page's tests: a Node server's error (two express frames, then
// the application's own with the code its SDK read around it), with a user and tags, sent as an
// envelope to Sentry's ingest route, as @sentry/node sends it.
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';

export const paymentFrames = [
  {
    filename: '/srv/app/node_modules/express/lib/router/index.js',
    function: 'next',
    lineno: 280,
    colno: 10,
    in_app: false,
  },
  {
    filename: '/srv/app/node_modules/express/lib/router/layer.js',
    function: 'Layer.handle',
    lineno: 95,
    colno: 5,
    in_app: false,
  },
  {
    filename: '/srv/app/src/pay.js',
    function: 'charge',
    lineno: 12,
    colno: 11,
    in_app: true,
    pre_context: ['export function charge(card) {', '  const answer = gateway.charge(card);'],
    context_line: "  if (!answer.ok) throw new PaymentError('card declined');",
    post_context: ['  return answer.id;', '}'],
  },
];

export interface SentEvent {
  event_id: string;
  timestamp: string;
  user?: Record<string, unknown>;
  tags?: Record<string, string>;
  type?: string;
}

/** An event at `second` seconds past 2026-11-21T12:00:00Z. */
export function paymentEvent(second: number, o: Omit<SentEvent, 'event_id' | 'timestamp'> = {}): SentEvent {
  return {
    event_id: crypto.randomUUID().replace(/-/g, ''),
    timestamp: new Date(Date.UTC(2026, 10, 21, 12, 0, second)).toISOString(),
    ...o,
  };
}

export async function sendEvent(web: WebHandle, env: CreatedEnv, e: SentEvent): Promise<void> {
  const event = {
    event_id: e.event_id,
    timestamp: e.timestamp,
    platform: 'node',
    exception: {
      values: [{ type: e.type ?? 'PaymentError', value: 'card declined', stacktrace: { frames: paymentFrames } }],
    },
    ...(e.user ? { user: e.user } : {}),
    ...(e.tags ? { tags: e.tags } : {}),
  };
  const envelope = [
    JSON.stringify({ event_id: e.event_id }),
    JSON.stringify({ type: 'event' }),
    JSON.stringify(event),
  ].join('\n');
  const path = `/api/${env.clientKey.projectNumber}/envelope/?sentry_key=${env.clientKey.publicKey}`;
  const res = await fetch(`${web.url}${path}`, { method: 'POST', body: envelope });
  if (res.status !== 200) throw new Error(`the envelope answered ${res.status}: ${await res.text()}`);
}

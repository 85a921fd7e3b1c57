// Deeply nested JSON never answers 500. A /v1 body nested deeper than 64 levels of objects and
// arrays is refused with 400 invalid_request (details.reason too_deep) before anything walks it:
// sign-up with a publishable key, single and batch capture, a source map upload. A Sentry event
// nested deeper than 128 levels (relay's parser's limit) is refused with 400, through the envelope
// and the store route; a shallower one is taken, its free-form data cut at relay's databag depth
// (an object or array 6 levels below `extra`, or below one of `contexts`, becomes its JSON text).
// A property sends arbitrary nesting to each of those routes: never a 5xx. These bodies used to
// answer 500 with a stack overflow in the log (the storable check and JSON.stringify recursing).
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { keyringFromConfig } from '../../src/crypto.ts';
import { openPayload } from '../../src/domain/errors/intake/sealed-payload.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { queuedEvents } from '../errors/support.ts';
import { createTestEnv, useWeb } from '../support/harness.ts';

const stack = useWeb();
let env: CreatedEnv;

beforeAll(async () => {
  env = await createTestEnv(stack.h.db);
});

/** `levels` of objects and arrays around `leaf`, alternating from `kinds` (true: an object). */
function nested(levels: number, leaf = '1', kinds: readonly boolean[] = [false]): string {
  let open = '';
  let close = '';
  for (let i = 0; i < levels; i++) {
    const object = kinds[i % kinds.length]!;
    open += object ? '{"k":' : '[';
    close = (object ? '}' : ']') + close;
  }
  return open + leaf + close;
}

async function post(path: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack.web.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

const base = () => `/v1/${env.env.name}`;
const secret = () => ({ authorization: `Bearer ${env.secretKey}` });
const publishable = () => ({ 'cairn-publishable-key': env.publishableKey });
const envelopePath = () => `/api/${env.clientKey.projectNumber}/envelope/?sentry_key=${env.clientKey.publicKey}`;
const storePath = () => `/api/${env.clientKey.projectNumber}/store/?sentry_key=${env.clientKey.publicKey}`;
const envelope = (event: string) => `{}\n{"type":"event"}\n${event}`;
const event = (fields: string) =>
  `{"event_id":"${crypto.randomUUID().replace(/-/g, '')}","exception":{"values":[{"type":"Error","value":"deep"}]},${fields}}`;

const tooDeep = (max: number) => ({
  status: 400,
  body: expect.objectContaining({ code: 'invalid_request', details: { reason: 'too_deep', max_depth: max } }),
});

/** The /v1 routes, each with a body holding `value` (its own levels around it: `around`). */
const v1Routes = [
  {
    name: 'sign-up (publishable key)',
    around: 1,
    send: (value: string) =>
      post('/v1/client/sign-up', `{"email":"not an address","password":"x","x":${value}}`, publishable()),
  },
  {
    name: 'capture',
    around: 3,
    send: (value: string) =>
      post(
        `${base()}/error_groups:capture`,
        `{"error_event":{"event_time":"2026-11-21T12:00:00Z","exception_type":"E","breadcrumbs":[${value}]}}`,
        secret(),
      ),
  },
  {
    name: 'batchCapture',
    around: 2,
    send: (value: string) => post(`${base()}/error_groups:batchCapture`, `{"error_events":[${value}]}`, secret()),
  },
  {
    name: 'source map upload',
    around: 2,
    send: async (value: string) => {
      const res = await fetch(`${stack.web.url}${base()}/releases/r1/source_maps`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', ...secret() },
        body: `{"file":"app.js","source_map":{"version":3,"x":${value}}}`,
      });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
    },
  },
];

describe('/v1 bodies', () => {
  for (const route of v1Routes)
    it(`${route.name}: 10,000 levels and 65 levels answer 400 too_deep, 64 levels pass the check`, async () => {
      expect(await route.send(nested(10_000))).toMatchObject(tooDeep(64));
      expect(await route.send(nested(65 - route.around, '1', [true, false]))).toMatchObject(tooDeep(64));
      const within = await route.send(nested(64 - route.around, '1', [true, false]));
      expect(within.body.details).not.toMatchObject({ reason: 'too_deep' });
      expect(within.status).toBeLessThan(500);
    });

  it('a whole body of 10,000 nested arrays (20 KiB) answers 400 too_deep', async () => {
    expect(await post('/v1/client/sign-up', nested(10_000), publishable())).toMatchObject(tooDeep(64));
  });
});

describe('Sentry events', () => {
  it('an event nested 5,000 levels answers 400 through the envelope and the store route', async () => {
    const deep = event(`"extra":{"x":${nested(5_000)}}`);
    for (const res of [await post(envelopePath(), envelope(deep)), await post(storePath(), deep)]) {
      expect(res).toMatchObject(tooDeep(128));
      expect(res.body.message).toMatch(/nested deeper than 128 levels/);
    }
    // 128 levels in all (the event object is the first) is within relay's limit; 129 is not.
    expect((await post(storePath(), event(`"extra":${nested(127, '1', [true])}`))).status).toBe(200);
    expect(await post(storePath(), event(`"extra":${nested(128, '1', [true])}`))).toMatchObject(tooDeep(128));
  });

  it("cuts free-form data at relay's databag depth: the object 6 levels down becomes its JSON text", async () => {
    const id = crypto.randomUUID().replace(/-/g, '');
    const payload = `{"event_id":"${id}","message":"deep","extra":{"a":${nested(20, '"leaf"', [true])}},"contexts":{"custom":${nested(10, '1', [false])}}}`;
    expect(await post(envelopePath(), envelope(payload))).toEqual({ status: 200, body: { id } });
    const keyring = keyringFromConfig(stack.h.config);
    const stored = (await queuedEvents(stack.h)).map((r) => openPayload(keyring, r)).find((e) => e.event_id === id)!;
    const sentry = (stored as unknown as { sentry: { extra: unknown; contexts: { custom: unknown } } }).sentry;
    // extra (level 0) → a (1) → k (2) … → the object at level 6 is text.
    let at: unknown = (sentry.extra as { a: unknown }).a;
    for (let level = 1; level < 6; level++) at = (at as { k: unknown }).k;
    expect(at).toBe(nested(20 - 5, '"leaf"', [true]));
    let ctx: unknown = sentry.contexts.custom;
    for (let level = 0; level < 6; level++) ctx = (ctx as unknown[])[0];
    expect(ctx).toBe(nested(10 - 6));
  });
});

describe('arbitrary nesting', () => {
  it('never answers a 5xx, on any of these routes, and refuses only what passes the stated limits', async () => {
    const levels = fc.oneof(fc.integer({ min: 0, max: 160 }), fc.constantFrom(1_000, 5_000, 10_000));
    await fc.assert(
      fc.asyncProperty(
        levels,
        fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
        fc.jsonValue({ maxDepth: 1 }),
        fc.nat({ max: v1Routes.length + 1 }),
        async (n, kinds, leaf, pick) => {
          const value = nested(n, JSON.stringify(leaf) ?? 'null', kinds);
          // The leaf may itself be an array or object: one level more.
          const leafLevel = typeof leaf === 'object' && leaf !== null ? 1 : 0;
          if (pick < v1Routes.length) {
            const route = v1Routes[pick]!;
            const res = await route.send(value);
            expect(res.status, `${route.name} ${n}`).toBeLessThan(500);
            if (n + leafLevel + route.around > 64) expect(res).toMatchObject(tooDeep(64));
            else expect(res.body.details ?? {}).not.toMatchObject({ reason: 'too_deep' });
          } else {
            const body = event(`"extra":{"x":${value}}`);
            const res =
              pick === v1Routes.length ? await post(storePath(), body) : await post(envelopePath(), envelope(body));
            expect(res.status, `sentry ${n}`).toBeLessThan(500);
            if (n + leafLevel + 2 > 128) expect(res).toMatchObject(tooDeep(128));
            else expect(res.status).toBe(200);
          }
        },
      ),
      { numRuns: 80 },
    );
  });
});

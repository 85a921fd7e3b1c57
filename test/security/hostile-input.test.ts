// No 5xx for anything a client can send, on every route the OpenAPI document describes (so a new
// route is covered when it is added): U+0000 and unpaired surrogates in path, query and body
// (identifiers refused with 400 invalid_request; free text of captures stored with U+FFFD),
// wrong types, huge numbers, and bodies whose Content-Encoding does not decode (400) or is
// unknown (415). Bodies are drawn from each route's own request schema, so most requests get past
// validation and reach the handlers and the database, where these used to fail. Also the portal
// pages and the OAuth form endpoints, which are not in the route table.
import { idleJobs } from '../support/jobs.ts';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';

type Json = Record<string, unknown>;
interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  additionalProperties?: JsonSchema | boolean;
}
interface Operation {
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; schema?: JsonSchema }[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let session: string;
let doc: { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, JsonSchema> } };

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
  // Generous limits: the property is about inputs, not rate limiting.
  const wide = { points: 1_000_000, seconds: 60 };
  await h
    .db('envs')
    .where({ id: env.env.id })
    .update({
      settings: {
        identity: {
          rate_limits: { sign_in: wide, sign_up: wide, password_reset: wide, verify_email: wide, redeem: wide },
        },
      },
    });
  await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
    email: 'hostile@example.com',
    password: 'a long and unguessable passphrase 1',
    email_verified: true,
  });
  const signedIn = await call<Json>(web.url, 'POST', '/v1/client/sign-in/password', {
    headers: { 'cairn-publishable-key': env.publishableKey },
    body: {
      identifier: 'hostile@example.com',
      password: 'a long and unguessable passphrase 1',
      session_mode: 'browser',
    },
  });
  session = String(signedIn.body.session_token);
  doc = (await call<typeof doc>(web.url, 'GET', '/v1/openapi.json')).body;
});

const unstorable = fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udc00y', '\udfff\ud800', 'ok\u0000\ud800');
const hostileString = fc.oneof(
  unstorable,
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 40 }),
  fc.constantFrom('', ' ', '%', '../..', 'a'.repeat(5000)),
);
const weird = fc.oneof(
  hostileString,
  fc.integer(),
  fc.constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -1, 0.5),
  fc.boolean(),
  fc.constant(null),
  fc.array(hostileString, { maxLength: 3 }),
  fc.dictionary(hostileString, hostileString, { maxKeys: 3 }),
);

/** Percent-encodes like encodeURIComponent, but sends a lone surrogate as the three bytes a raw client could (invalid UTF-8). */
function pct(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff)
      out += [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    else out += encodeURIComponent(ch);
  }
  return out;
}

function resolve(schema: JsonSchema | undefined): JsonSchema {
  let s = schema ?? {};
  while (s.$ref) s = doc.components?.schemas?.[s.$ref.split('/').pop()!] ?? {};
  return s;
}

/** Values shaped like the schema, with hostile strings and numbers where it takes them, and now and then a wrong type. */
function arbitraryFor(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  if (depth > 4) return weird;
  const variants = s.anyOf ?? s.oneOf;
  if (variants) return fc.oneof(...variants.map((v) => arbitraryFor(v, depth + 1)));
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  const shaped = (() => {
    if (s.enum) return fc.constantFrom(...s.enum);
    switch (type) {
      case 'object': {
        const props = Object.fromEntries(
          Object.entries(s.properties ?? {}).map(([k, v]) => [k, arbitraryFor(v, depth + 1)]),
        );
        const keys = Object.keys(props);
        if (keys.length === 0) return fc.dictionary(hostileString, weird, { maxKeys: 3 });
        return fc.record(props, { requiredKeys: (s.required ?? []).filter((k) => keys.includes(k)) });
      }
      case 'array':
        return fc.array(arbitraryFor(s.items, depth + 1), { maxLength: 3 });
      case 'string':
        return hostileString;
      case 'integer':
      case 'number':
        return fc.oneof(fc.integer({ min: -5, max: 100 }), fc.constantFrom(1e308, -1e308, 2 ** 63, 0.5));
      case 'boolean':
        return fc.boolean();
      default:
        return weird;
    }
  })();
  return fc.oneof({ weight: 9, arbitrary: shaped }, { weight: 1, arbitrary: weird });
}

const envParams: Record<string, () => string> = {
  org: () => env.env.name.split('/')[1]!,
  project: () => env.env.name.split('/')[3]!,
  env: () => env.env.name.split('/')[5]!,
};

function headersFor(op: Operation): Record<string, string> {
  const scheme = Object.keys(op.security?.[0] ?? {})[0];
  if (scheme === 'secretKey') return { authorization: `Bearer ${env.secretKey}` };
  if (scheme === 'sessionBearer') return { authorization: `Bearer ${session}` };
  if (scheme === 'publishableKey') return { 'cairn-publishable-key': env.publishableKey };
  return {};
}

function operations(): { method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
}

function expectNo5xx(res: { status: number; body: unknown }, what: string): void {
  expect(res.status, `${what} → ${res.status} ${JSON.stringify(res.body)}`).toBeLessThan(500);
}

describe('every route, with hostile input', () => {
  it('answers no 5xx, and refuses unstorable identifiers with 400 invalid_request', async () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(50);
    for (const { method, path, op } of ops) {
      const pathParams = path.match(/\{(\w+)\}/g)?.map((p) => p.slice(1, -1)) ?? [];
      const queryParams = (op.parameters ?? []).filter((p) => p.in === 'query');
      const bodySchema = op.requestBody?.content?.['application/json']?.schema;
      const input = fc.record({
        path: fc.record(Object.fromEntries(pathParams.filter((p) => !(p in envParams)).map((p) => [p, hostileString]))),
        query: fc.record(
          Object.fromEntries(
            queryParams.map((p) => [p.name, fc.oneof(hostileString, fc.constantFrom('1e308', '-1', 'true'))]),
          ),
          { requiredKeys: [] },
        ),
        body: bodySchema ? arbitraryFor(bodySchema) : fc.constant(undefined),
      });
      await fc.assert(
        fc.asyncProperty(input, async ({ path: p, query, body }) => {
          const url = path.replace(/\{(\w+)\}/g, (_, name: string) =>
            pct(envParams[name]?.() ?? (p as Record<string, string>)[name] ?? 'x'),
          );
          const qs = Object.entries(query as Record<string, string>)
            .map(([k, v]) => `${pct(k)}=${pct(v)}`)
            .join('&');
          const res = await fetch(`${web.url}${url}${qs ? `?${qs}` : ''}`, {
            method,
            redirect: 'manual',
            headers: { ...headersFor(op), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
            body: body !== undefined ? JSON.stringify(body) : undefined,
          });
          expectNo5xx({ status: res.status, body: await res.text() }, `${method} ${path}`);
        }),
        { numRuns: 12 },
      );
    }
  }, 300_000);

  it('refuses U+0000 in an identifier with 400 invalid_request naming the field, and stores it in free text as U+FFFD', async () => {
    const signIn = await call<Json>(web.url, 'POST', '/v1/client/sign-in/password', {
      headers: { 'cairn-publishable-key': env.publishableKey },
      body: { identifier: 'a\u0000@example.com', password: 'x' },
    });
    expect(signIn).toMatchObject({
      status: 400,
      body: { code: 'invalid_request', message: expect.stringContaining('body.identifier') },
    });
    const capture = await call<Json>(web.url, 'POST', `/v1/${env.env.name}/error_groups:capture`, {
      key: env.secretKey,
      body: {
        error_event: {
          event_time: '2026-11-21T12:00:00Z',
          exception_type: 'Error',
          message: 'nul \u0000 and \ud800 lone',
        },
      },
    });
    expect(capture.status).toBe(202);
  });

  it('answers 400 for a body that does not decode as its Content-Encoding says, and 415 for an unknown one', async () => {
    // A session of its own: the hostile round above may have signed the first one out.
    const signedIn = await call<Json>(web.url, 'POST', '/v1/client/sign-in/password', {
      headers: { 'cairn-publishable-key': env.publishableKey },
      body: {
        identifier: 'hostile@example.com',
        password: 'a long and unguessable passphrase 1',
        session_mode: 'browser',
      },
    });
    session = String(signedIn.body.session_token);
    for (const { method, path, op } of operations().filter((o) => o.op.requestBody?.content?.['application/json'])) {
      const url = path.replace(/\{(\w+)\}/g, (_, name: string) => envParams[name]?.() ?? 'x');
      const send = (encoding: string, data: Buffer) =>
        fetch(`${web.url}${url}`, {
          method,
          headers: { ...headersFor(op), 'content-type': 'application/json', 'content-encoding': encoding },
          body: data,
        });
      const garbage = await send('gzip', Buffer.from('this is not gzip at all'));
      expect(garbage.status, `${method} ${path} gzip garbage`).toBe(400);
      expect(((await garbage.json()) as Json).code).toBe('invalid_request');
      const cut = await send('gzip', gzipSync(JSON.stringify({ a: 'b'.repeat(1000) })).subarray(0, 30));
      expect(cut.status, `${method} ${path} cut gzip`).toBe(400);
      const unknown = await send('x-squash', Buffer.from('{}'));
      expect(unknown.status, `${method} ${path} unknown encoding`).toBe(415);
    }
  }, 120_000);
});

describe('the portal pages and the OAuth form endpoints', () => {
  const form = (fields: Record<string, string>) =>
    Object.entries(fields)
      .map(([k, v]) => `${pct(k)}=${pct(v)}`)
      .join('&');
  it('answer no 5xx for hostile form fields and query parameters', async () => {
    await fc.assert(
      fc.asyncProperty(hostileString, hostileString, async (a, b) => {
        for (const [method, path, body] of [
          ['POST', '/v1/oauth/device_authorization', form({ client_id: a, scope: b })],
          [
            'POST',
            '/v1/oauth/token',
            form({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: a, client_id: b }),
          ],
          ['GET', `/device?user_code=${pct(a)}`, undefined],
          ['GET', `/sign-in?env=${pct(env.env.id)}&redirect_url=${pct(b)}`, undefined],
          ['GET', `/v1/oidc/callback?state=${pct(a)}&code=${pct(b)}`, undefined],
        ] as const) {
          const res = await fetch(`${web.url}${path}`, {
            method,
            redirect: 'manual',
            headers: body ? { 'content-type': 'application/x-www-form-urlencoded' } : {},
            body,
          });
          expect(res.status, `${method} ${path} → ${res.status} ${await res.text()}`).toBeLessThan(500);
        }
      }),
      { numRuns: 40 },
    );
  });
});

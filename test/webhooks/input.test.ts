// No client body gives a 500 at the webhook routes (house rule), and a refused one changes nothing:
// arbitrary JSON, raw text, NUL and lone surrogates in every field answer 2xx or a 4xx with a code.
import fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { newId } from '../../src/ids.ts';
import { call, createTestEnv, sqlNumber, type Harness, useWeb } from '../support/harness.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let live: CreatedEnv;

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
  live = await createTestEnv(h.db, undefined, 'live');
});

const hostile = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfffy', 'http://127.0.0.1/\u0000', 'https://[::1]/'),
  fc.jsonValue(),
);

it('answers every body with a 2xx or a 4xx carrying a code, and a 4xx writes nothing', async () => {
  const base = `/v1/${env.env.name}/webhook_endpoints`;
  const existing = await call<{ id: string }>(web.url, 'POST', base, {
    key: env.secretKey,
    body: { url: 'http://127.0.0.1:9/hook', event_types: ['*'] },
  });
  expect(existing.status).toBe(201);
  const targets: [string, string, CreatedEnv][] = [
    ['POST', base, env],
    ['POST', `/v1/${live.env.name}/webhook_endpoints`, live],
    ['PATCH', `${base}/${existing.body.id}`, env],
    ['POST', `${base}/${existing.body.id}:rotateSecret`, env],
    ['POST', `${base}/${existing.body.id}/deliveries/${newId('whmsg')}:redeliver`, env],
    ['PATCH', `${base}/${newId('whep')}`, env],
  ];
  const body = fc.oneof(
    fc.json(),
    fc.string({ maxLength: 200 }),
    fc
      .record(
        {
          url: hostile,
          event_types: fc.oneof(hostile, fc.array(hostile, { maxLength: 3 })),
          description: hostile,
          state: hostile,
        },
        { requiredKeys: [] },
      )
      .map((v) => JSON.stringify(v)),
  );
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...targets), body, async ([method, path, who], raw) => {
      const before = await sqlNumber(
        h.db,
        'select count(*) from webhook_endpoints where env_id = ? and update_time = create_time',
        [who.env.id],
      );
      const endpoints = await sqlNumber(h.db, 'select count(*) from webhook_endpoints where env_id = ?', [who.env.id]);
      const res = await call(web.url, method, path, {
        key: who.secretKey,
        rawBody: raw,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBeLessThan(500);
      if (res.status >= 400) {
        expect(typeof (res.body as { code?: unknown }).code).toBe('string');
        expect(await sqlNumber(h.db, 'select count(*) from webhook_endpoints where env_id = ?', [who.env.id])).toBe(
          endpoints,
        );
        expect(
          await sqlNumber(
            h.db,
            'select count(*) from webhook_endpoints where env_id = ? and update_time = create_time',
            [who.env.id],
          ),
        ).toBe(before);
      }
    }),
    { numRuns: 200 },
  );
});

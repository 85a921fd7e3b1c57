// No client body gives a 500 (house rule): arbitrary JSON and raw bodies at every backup and
// storage route that reads a body answer a 4xx with a stable code.
import fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { newId } from '../../src/ids.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
});

it('answers every body with a 2xx or a 4xx carrying a code', async () => {
  const e = `/v1/${env.env.name}`;
  const targets: [string, string][] = [
    ['POST', `${e}/backups`],
    ['POST', `/v1/backups/${newId('backup')}/restore`],
    ['PUT', `${e}/backup_settings`],
    ['POST', `${e}/buckets`],
    ['POST', `${e}/buckets/nope/objects/k:restoreVersion`],
  ];
  const body = fc.oneof(
    fc.json(),
    fc.string({ maxLength: 200 }),
    fc.jsonValue().map((v) => JSON.stringify({ targetEnv: v, type: v, name: v, versionId: v })),
  );
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...targets), body, async ([method, path], raw) => {
      const res = await call(web.url, method, path, {
        key: env.secretKey,
        rawBody: raw,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBeLessThan(500);
      if (res.status >= 400) expect(typeof (res.body as { code?: unknown }).code).toBe('string');
    }),
    { numRuns: 150 },
  );
});

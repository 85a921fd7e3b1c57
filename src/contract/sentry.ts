// Shapes of the Sentry-compatible surface (docs/api.md "Sentry compatibility"): client keys (DSNs)
// on the /v1 API, and the answers of the ingest routes.
import { z } from 'zod';
import { envParams } from './tenancy.ts';

export { envParams };

export const clientKeyParams = envParams.extend({
  client_key: z.string().regex(/^ck_[0-9a-z]{26}$/, 'a client key id such as ck_01j…'),
});

const rateLimit = z
  .strictObject({
    count: z.number().int().min(1).max(1_000_000),
    window_seconds: z.number().int().min(1).max(86_400),
  })
  .meta({ description: 'At most `count` events per `window_seconds` through this key; more answer 429' });

export const clientKeyBody = z.strictObject({ rate_limit: rateLimit.optional() }).optional();

export const clientKeyResource = z
  .object({
    id: z.string(),
    public_key: z.string().meta({ description: '32 lower-case hex: the user part of the DSN' }),
    dsn: z.string().meta({ example: 'https://0123456789abcdef0123456789abcdef@cairn.example.com/42' }),
    create_time: z.string(),
    rate_limit: rateLimit.optional(),
  })
  .meta({ id: 'ClientKey' });

export const clientKeyList = z.object({ client_keys: z.array(clientKeyResource) }).meta({ id: 'ClientKeyList' });

/** Every ingest answer that took an event: its id, as Sentry answers (relay's `{"id"}`). */
export const ingestAnswer = z.object({ id: z.string().nullable() });

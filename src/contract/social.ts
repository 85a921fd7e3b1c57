// Social sign-in providers of an environment (docs/api.md "Social sign-in"): what a PUT takes and
// what the API answers. The presenter (domain/social/present.ts) keeps every secret out of it.
import { z } from 'zod';

export const providerNames = ['google', 'github', 'apple'] as const;

const provider = z.enum(providerNames);

const httpsUrl = z.url({ protocol: /^https?$/ }).max(2048);

export const providerInput = z
  .object({
    enabled: z.boolean().default(true),
    client_id: z.string().min(1).max(512).optional(),
    client_secret: z.string().min(1).max(4096).optional(),
    apple: z
      .object({
        team_id: z.string().regex(/^[A-Z0-9]{10}$/),
        key_id: z.string().regex(/^[A-Z0-9]{10}$/),
        private_key: z.string().max(4096),
      })
      .strict()
      .optional(),
    issuer: httpsUrl.optional(),
    authorization_endpoint: httpsUrl.optional(),
    token_endpoint: httpsUrl.optional(),
    api_base_url: httpsUrl.optional(),
  })
  .strict();

export const providerSchema = z
  .object({
    provider,
    enabled: z.boolean(),
    uses_shared_client: z.boolean(),
    client_id: z.string().nullable(),
    has_client_secret: z.boolean(),
    apple: z.object({ team_id: z.string(), key_id: z.string().nullable() }).optional(),
    issuer: z.string().nullable(),
    authorization_endpoint: z.string().nullable(),
    token_endpoint: z.string().nullable(),
    api_base_url: z.string().nullable(),
    update_time: z.string(),
  })
  .meta({ id: 'SocialProvider' });

export type SocialProviderName = z.output<typeof provider>;
export type SocialProvider = z.output<typeof providerSchema>;
/** What `PUT …/social_providers/{provider}` takes; secrets go in and never come back out. */
export type SocialProviderInput = z.input<typeof providerInput>;

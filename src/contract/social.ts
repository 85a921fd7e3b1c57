// Social sign-in providers of an environment (docs/api.md "Social sign-in"): what the API answers,
// and the presenter that keeps every secret out of it. The input is the domain's `providerInput`.
import { z } from 'zod';
import { providerInput, providerNames } from '../domain/social/providers.ts';
import type { ProviderRow } from '../domain/social/queries.ts';

const provider = z.enum(providerNames);

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

/** The public view: what is configured, never a secret. */
export function providerResource(row: ProviderRow): SocialProvider {
  return {
    provider: row.provider,
    enabled: row.enabled,
    uses_shared_client: row.client_id === null,
    client_id: row.client_id,
    has_client_secret: row.client_secret_sealed !== null || row.apple_private_key_sealed !== null,
    ...(row.apple_team_id ? { apple: { team_id: row.apple_team_id, key_id: row.apple_key_id } } : {}),
    issuer: row.issuer,
    authorization_endpoint: row.authorization_endpoint,
    token_endpoint: row.token_endpoint,
    api_base_url: row.api_base_url,
    update_time: row.update_time.toISOString(),
  };
}

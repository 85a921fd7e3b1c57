// Social sign-in providers as the API shows them (contract/social.ts): what is configured, never a
// secret.
import type { SocialProvider } from '../../contract/social.ts';
import type { ProviderRow } from './queries.ts';

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

// Social sign-in providers of an environment, for the application's server and the
// CLI. Secrets go in and never come back out.
import { envPath, type CairnClient } from './client.ts';

export type SocialProviderName = 'google' | 'github' | 'apple';

export interface SocialProvider {
  provider: SocialProviderName;
  enabled: boolean;
  uses_shared_client: boolean;
  client_id: string | null;
  has_client_secret: boolean;
  apple?: { team_id: string; key_id: string | null };
  issuer: string | null;
  authorization_endpoint: string | null;
  token_endpoint: string | null;
  api_base_url: string | null;
  update_time: string;
}

export interface SocialProviderInput {
  enabled?: boolean;
  /** Omit for Google on the service's shared client. */
  client_id?: string;
  client_secret?: string;
  apple?: { team_id: string; key_id: string; private_key: string };
  issuer?: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  api_base_url?: string;
}

const name = (p: string): SocialProviderName => {
  if (p !== 'google' && p !== 'github' && p !== 'apple')
    throw new Error(`"${p}" is not a provider (google, github, apple)`);
  return p;
};

export class SocialProvidersApi {
  readonly client: CairnClient;

  constructor(client: CairnClient) {
    this.client = client;
  }

  list(env: string): Promise<{ social_providers: SocialProvider[] }> {
    return this.client.request('GET', `${envPath(env)}/social_providers`);
  }

  set(env: string, provider: string, body: SocialProviderInput): Promise<SocialProvider> {
    return this.client.request('PUT', `${envPath(env)}/social_providers/${name(provider)}`, { body });
  }

  async delete(env: string, provider: string): Promise<void> {
    await this.client.request('DELETE', `${envPath(env)}/social_providers/${name(provider)}`);
  }
}

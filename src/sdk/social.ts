// Social sign-in providers of an environment, for the application's server and the
// CLI. Secrets go in and never come back out.
import { envPath, type CairnClient } from './client.ts';

import type { SocialProvider, SocialProviderInput, SocialProviderName } from '../contract/social.ts';

export type { SocialProvider, SocialProviderInput, SocialProviderName };

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

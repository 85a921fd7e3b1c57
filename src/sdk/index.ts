// The Cairn SDK: one client, one API object per area.
//   const cairn = createCairn({ baseUrl, secretKey, envName: 'orgs/acme/projects/shop/envs/prod' });
//   await cairn.errorGroups.list(…); await cairn.storage.enableVersioning('uploads');
import { AlertsApi } from './alerts.ts';
import { BackupsApi, StorageApi } from './backups.ts';
import { SignInApi } from './browser.ts';
import { CairnClient, type ClientOptions } from './client.ts';
import { EndUsersApi } from './end-users.ts';
import { ErrorGroupsApi } from './errors.ts';
import { SocialProvidersApi } from './social.ts';
import { WebhooksApi } from './webhooks.ts';

export { CairnApiError, CairnClient, CairnConnectionError, envPath } from './client.ts';
export type { ClientOptions } from './client.ts';
export { AlertsApi, BackupsApi, EndUsersApi, ErrorGroupsApi, SignInApi, SocialProvidersApi, StorageApi, WebhooksApi };
export { createCairnBrowser, type BrowserOptions, type FactorProof } from './browser.ts';
export type { AlertFiring, AlertRule, AlertRuleInput, AlertRuleUpdate } from './alerts.ts';
export type { SocialProvider, SocialProviderInput } from './social.ts';
export type {
  Delivery as WebhookDelivery,
  Endpoint as WebhookEndpoint,
  EndpointInput as WebhookEndpointInput,
  EndpointUpdate as WebhookEndpointUpdate,
} from './webhooks.ts';

export function createCairn(options: ClientOptions & { envName?: string }) {
  const client = new CairnClient(options);
  return {
    client,
    endUsers: new EndUsersApi(client),
    socialProviders: new SocialProvidersApi(client),
    errorGroups: new ErrorGroupsApi(client),
    backups: new BackupsApi(client),
    webhooks: new WebhooksApi(client),
    alerts: new AlertsApi(client),
    /** The publishable-key calls a page makes (sign up, sign in, session); needs `publishableKey`. */
    signIn: new SignInApi(client),
    /** Storage needs the environment: pass `envName`. */
    get storage(): StorageApi {
      if (!options.envName) throw new Error('createCairn({ envName }) is needed for storage calls');
      return new StorageApi(client, options.envName);
    },
  };
}

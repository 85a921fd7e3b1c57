// Webhook endpoints and their deliveries (docs/api.md "Webhooks"), for the application's server and
// the CLI. The signing secret comes back only from `create` and `rotateSecret`: keep it then.
import { envPath, type CairnClient } from './client.ts';

import type { Delivery, Endpoint, EndpointInput, EndpointUpdate } from '../contract/webhooks.ts';

export type { Delivery, Endpoint, EndpointInput, EndpointUpdate };

export interface PageOptions {
  pageSize?: number;
  pageToken?: string;
}

// Checked here so a mistyped id is named as such instead of travelling as an odd path segment.
const endpointId = (id: string): string => {
  if (!/^whep_[0-9a-z]{26}$/.test(id)) throw new Error(`"${id}" is not a webhook endpoint id (whep_…)`);
  return id;
};
const messageId = (id: string): string => {
  if (!/^whmsg_[0-9a-z]{26}$/.test(id)) throw new Error(`"${id}" is not a webhook message id (whmsg_…)`);
  return id;
};

export class WebhooksApi {
  readonly client: CairnClient;

  constructor(client: CairnClient) {
    this.client = client;
  }

  private endpoints(env: string): string {
    return `${envPath(env)}/webhook_endpoints`;
  }

  private endpoint(env: string, id: string): string {
    return `${this.endpoints(env)}/${endpointId(id)}`;
  }

  /** The answer holds `secret` (whsec_…), shown this once. */
  create(env: string, body: EndpointInput): Promise<Endpoint> {
    return this.client.request('POST', this.endpoints(env), { body });
  }

  /** Oldest first. */
  list(env: string, p: PageOptions = {}): Promise<{ webhook_endpoints: Endpoint[]; next_page_token?: string }> {
    return this.client.request('GET', this.endpoints(env), {
      query: { page_size: p.pageSize, page_token: p.pageToken },
    });
  }

  get(env: string, id: string): Promise<Endpoint> {
    return this.client.request('GET', this.endpoint(env, id));
  }

  /** Enabling a disabled endpoint clears its disabled_reason. */
  update(env: string, id: string, patch: EndpointUpdate): Promise<Endpoint> {
    return this.client.request('PATCH', this.endpoint(env, id), { body: patch });
  }

  /** Deletes the endpoint with its deliveries; nothing more is sent to it. */
  async delete(env: string, id: string): Promise<void> {
    await this.client.request('DELETE', this.endpoint(env, id));
  }

  /** A new secret (in the answer, shown this once); for 24 hours messages carry both signatures. */
  rotateSecret(env: string, id: string): Promise<Endpoint> {
    return this.client.request('POST', `${this.endpoint(env, id)}:rotateSecret`);
  }

  /** The last 30 days of deliveries with their attempts, newest first. */
  listDeliveries(
    env: string,
    id: string,
    p: PageOptions = {},
  ): Promise<{ deliveries: Delivery[]; next_page_token?: string }> {
    return this.client.request('GET', `${this.endpoint(env, id)}/deliveries`, {
      query: { page_size: p.pageSize, page_token: p.pageToken },
    });
  }

  /** One more attempt of a settled delivery (same webhook-id and body); answers it pending. */
  redeliver(env: string, id: string, message: string): Promise<Delivery> {
    return this.client.request('POST', `${this.endpoint(env, id)}/deliveries/${messageId(message)}:redeliver`);
  }
}

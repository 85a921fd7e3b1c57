// The Cairn SDK: one client, one API object per area.
import { CairnClient, type ClientOptions } from './client.ts';

export { CairnApiError, CairnClient, envPath } from './client.ts';
export type { ClientOptions } from './client.ts';

export function createCairn(options: ClientOptions) {
  const client = new CairnClient(options);
  return { client };
}

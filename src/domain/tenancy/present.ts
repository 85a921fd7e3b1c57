// Environments as the API shows them (contract/tenancy.ts).
import type { Environment } from '../../contract/tenancy.ts';
import type { EnvRow } from './queries.ts';

export function envView(env: Pick<EnvRow, 'name' | 'id' | 'mode' | 'create_time'>): Environment {
  return { name: env.name, uid: env.id, mode: env.mode, create_time: env.create_time.toISOString() };
}

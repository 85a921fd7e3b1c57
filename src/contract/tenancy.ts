// Environments: the path parameters every environment-scoped route takes, and the resource.
import { z } from 'zod';
import { segmentPattern } from '../domain/tenancy/names.ts';
import type { EnvRow } from '../domain/tenancy/queries.ts';

const segment = z.string().regex(segmentPattern, 'lower-case letters, digits and dashes');

export const envParams = z.object({ org: segment, project: segment, env: segment });

export const envResource = z
  .object({
    name: z.string().meta({ example: 'orgs/acme/projects/shop/envs/prod' }),
    uid: z.string(),
    mode: z.enum(['test', 'live']),
    create_time: z.string(),
  })
  .meta({ id: 'Environment' });

export type Environment = z.output<typeof envResource>;

export function envView(env: Pick<EnvRow, 'name' | 'id' | 'mode' | 'create_time'>): Environment {
  return { name: env.name, uid: env.id, mode: env.mode, create_time: env.create_time.toISOString() };
}

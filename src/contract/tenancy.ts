import { z } from 'zod';
import { segmentPattern } from '../domain/tenancy/names.ts';

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

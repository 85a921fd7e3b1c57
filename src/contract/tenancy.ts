// Environments: the path parameters every environment-scoped route takes, and the resource.
import { z } from 'zod';

/**
 * Resource names follow AIP-122: `orgs/{org}/projects/{project}/envs/{env}`. Segment ids are
 * lower-case, start with a letter or digit, and are at most 63 characters (DNS-label-like).
 */
export const segmentPattern = /^[a-z0-9][a-z0-9-]{0,62}$/;

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

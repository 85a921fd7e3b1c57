// Resource names follow AIP-122: `orgs/{org}/projects/{project}/envs/{env}`, each segment as
// contract/tenancy.ts `segmentPattern` allows.
import { segmentPattern } from '../../contract/tenancy.ts';

export interface EnvPath {
  org: string;
  project: string;
  env: string;
}

export function parseEnvName(name: string): EnvPath | null {
  const m = /^orgs\/([^/]+)\/projects\/([^/]+)\/envs\/([^/]+)$/.exec(name);
  if (!m) return null;
  const [, org, project, env] = m as unknown as [string, string, string, string];
  return [org, project, env].every((s) => segmentPattern.test(s)) ? { org, project, env } : null;
}

export function envName(path: EnvPath): string {
  return `orgs/${path.org}/projects/${path.project}/envs/${path.env}`;
}

// Resource names follow AIP-122: `orgs/{org}/projects/{project}/envs/{env}`. Segment ids are
// lower-case, start with a letter or digit, and are at most 63 characters (DNS-label-like).
export const segmentPattern = /^[a-z0-9][a-z0-9-]{0,62}$/;

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

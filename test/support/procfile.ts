// The Procfile's commands, for tests and benches that start the processes as the platform does.
import { readFileSync } from 'node:fs';

const root = new URL('../../', import.meta.url).pathname;

/** The node arguments of a Procfile process (its flags included), to run from the repository root. */
export function procfileArgs(role: 'web' | 'worker' | 'release'): string[] {
  const line = readFileSync(`${root}Procfile`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${role}:`));
  const [node, ...args] = (line ?? '')
    .slice(role.length + 1)
    .trim()
    .split(/\s+/);
  if (node !== 'node') throw new Error(`the Procfile's ${role} does not start with node`);
  return args;
}

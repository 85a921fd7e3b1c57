// The `cairn` binary as a user runs it: a child process of bin/cairn.js with only the variables
// given (and PATH), its exit code and both outputs, whether it succeeded or not.
import { execFile } from 'node:child_process';

const bin = new URL('../../bin/cairn.js', import.meta.url).pathname;

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCairn(args: string[], vars: Record<string, string | undefined>, cwd?: string): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: { PATH: process.env.PATH, ...vars }, encoding: 'utf8', ...(cwd ? { cwd } : {}) },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

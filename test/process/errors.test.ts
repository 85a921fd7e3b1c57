// Start-up and CLI failures name the cause and the next step (a new user's first hour): a port in
// use names its process and the variable that moves Cairn elsewhere; a CLI command with the
// service down names the URL it tried and how to start it; a refused key names its variable; an
// admin command with its database down names where the setting came from.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCairn } from '../support/cli.ts';
import { createTestEnv, useWeb } from '../support/harness.ts';

const script = new URL('../../src/start.ts', import.meta.url).pathname;
const dirs: string[] = [];

afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function listen(host = '0.0.0.0'): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as { port: number }).port };
}

async function freePort(): Promise<number> {
  const { server, port } = await listen('127.0.0.1');
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** `npm start` in a fresh folder with `vars`, to its exit: its code and what it printed. */
async function start(vars: Record<string, string>): Promise<{ code: number; out: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-start-err-'));
  dirs.push(dir);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [script],
      { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: dir, LOG_LEVEL: 'warn', ...vars }, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

describe('npm start', () => {
  it('with its port taken names the process holding it and how to choose another', async () => {
    const { server, port } = await listen();
    try {
      const r = await start({ PORT: String(port), CAIRN_EMBEDDED_PG_PORT: String(await freePort()) });
      expect(r.code).toBe(1);
      expect(r.out).toContain(`Cairn could not start: port ${port} is in use by pid ${process.pid} (`);
      expect(r.out).toContain(`PORT=${port + 1} npm start`);
      expect(r.out).not.toMatch(/undefined|\n\s+at /);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("with the embedded Postgres's port taken says which variable moves it", async () => {
    const { server, port } = await listen('127.0.0.1');
    try {
      const r = await start({ PORT: String(await freePort()), CAIRN_EMBEDDED_PG_PORT: String(port) });
      expect(r.code).toBe(1);
      expect(r.out).toContain(`port ${port}, which the embedded Postgres uses, is in use by pid ${process.pid}`);
      expect(r.out).toContain(`CAIRN_EMBEDDED_PG_PORT=${port + 1} npm start`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('the cairn CLI', () => {
  const stack = useWeb();

  it('with the service down names the URL it tried and how to start the service', async () => {
    const port = await freePort();
    const r = await runCairn(['end-users', 'list', '--env', 'orgs/a/projects/b/envs/c'], {
      CAIRN_API_URL: `http://127.0.0.1:${port}`,
      CAIRN_SECRET_KEY: `cairn_sk_test_${'x'.repeat(32)}`,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`could not reach the Cairn API at http://127.0.0.1:${port} (connection refused`);
    expect(r.stderr).toContain('npm start');
    expect(r.stderr).toContain('CAIRN_API_URL');
    expect(r.stderr).not.toContain('fetch failed');
  });

  it('with a key the API refuses names CAIRN_SECRET_KEY and where to get one', async () => {
    const env = await createTestEnv(stack.h.db);
    const r = await runCairn(['end-users', 'list', '--env', env.env.name], {
      CAIRN_API_URL: stack.web.url,
      CAIRN_SECRET_KEY: `cairn_sk_test_${'y'.repeat(32)}`,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/HTTP 401/);
    expect(r.stderr).toContain('CAIRN_SECRET_KEY');
    expect(r.stderr).toContain('admin keys create');
  });

  it('an admin command with DATABASE_URL pointing at nothing names the address and the variable', async () => {
    const port = await freePort();
    const r = await runCairn(['admin', 'keys', 'list', '--env', 'orgs/a/projects/b/envs/c'], {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/cairn`,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`could not connect to the service database at 127.0.0.1:${port} (connection refused)`);
    expect(r.stderr).toContain('check DATABASE_URL');
  });

  it('an admin command beside a stopped `npm start` says to start it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-cli-err-'));
    dirs.push(dir);
    const port = await freePort();
    await mkdir(join(dir, '.data'));
    await writeFile(join(dir, '.data', 'cairn.env'), `DATABASE_URL=postgres://postgres@127.0.0.1:${port}/cairn\n`);
    const r = await runCairn(['admin', 'keys', 'list', '--env', 'orgs/a/projects/b/envs/c'], {}, dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`at 127.0.0.1:${port} (connection refused)`);
    expect(r.stderr).toContain('start it with `npm start`');
  });
});

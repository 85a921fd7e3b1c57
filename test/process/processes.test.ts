// The Procfile processes as the platform runs them: separate OS processes, configured only by the
// environment, stopped by SIGTERM (Heroku gives 30 s; we must be gone within 25 s).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebHandle } from '../../src/server.ts';
import { testEncryptionKey } from '../support/config.ts';
import { call, createHarness, startTestWeb, type Harness } from '../support/harness.ts';
import { createGate, probeRoutes } from '../support/probes.ts';
import { procfileArgs } from '../support/procfile.ts';

let h: Harness;
// A database only, not useWeb(): each test starts and stops its own web or worker, the stop being what it tests.
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

function run(args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return { child, output: () => out };
}

async function waitFor(output: () => string, pattern: RegExp, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!pattern.test(output())) {
    if (child.exitCode !== null) throw new Error(`process exited early:\n${output()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}:\n${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function exitWithin(child: ChildProcess, ms: number): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, ms: Date.now() - started };
}

describe('configuration', () => {
  it('stops start-up naming each bad variable and how to fix it', async () => {
    const p = run(procfileArgs('web'), { CAIRN_ENCRYPTION_KEY: 'too-short', CAIRN_CELL: 'ABC' });
    const { code } = await exitWithin(p.child, 20_000);
    expect(code).toBe(1);
    expect(p.output()).toMatch(/DATABASE_URL is missing: set it to a Postgres URL/);
    expect(p.output()).toMatch(
      /CAIRN_ENCRYPTION_KEY must be 32 random bytes, as base64 or 64 hex characters: generate one with `openssl rand -base64 32`/,
    );
    expect(p.output()).toMatch(/CAIRN_CELL/);
    expect(p.output()).not.toMatch(/at .*\.ts:\d+/); // a message, not a stack trace
  });
});

describe('bin/process.js', () => {
  // Prints, as the process exits, whether Node loaded its TypeScript stripper (amaro).
  const reportStripper = `data:text/javascript,process.on('exit', () => console.log('stripper loaded: ' + process.moduleLoadList.some((m) => m.includes('amaro'))))`;

  it('fills the compile cache so that the processes start without the TypeScript stripper', async () => {
    const filled = mkdtempSync(join(tmpdir(), 'cairn-compile-'));
    const empty = mkdtempSync(join(tmpdir(), 'cairn-compile-'));
    /** Loads a role's modules (without starting it) under its Procfile flags; whether it stripped any. */
    const load = async (role: 'web' | 'worker', cache: string) => {
      const flags = procfileArgs(role).filter((a) => a.startsWith('--'));
      const p = run(['--import', reportStripper, ...flags, 'bin/process.js', 'warm', role], {
        NODE_COMPILE_CACHE: cache,
      });
      expect((await exitWithin(p.child, 20_000)).code).toBe(0);
      return /stripper loaded: true/.test(p.output());
    };
    try {
      const warm = run(['bin/process.js', 'warm'], { NODE_COMPILE_CACHE: filled });
      expect((await exitWithin(warm.child, 30_000)).code).toBe(0);
      expect(readdirSync(filled)).toHaveLength(2); // one cache per set of V8 flags
      expect(await load('web', filled)).toBe(false);
      expect(await load('worker', filled)).toBe(false);
      expect(await load('web', empty)).toBe(true); // what it costs without
    } finally {
      rmSync(filled, { recursive: true, force: true });
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('names its roles when given another', async () => {
    const p = run(['bin/process.js', 'wbe'], {});
    expect((await exitWithin(p.child, 20_000)).code).toBe(2);
    expect(p.output()).toMatch(/usage: node bin\/process.js web\|worker\|warm \(not wbe\)/);
  });
});

describe('SIGTERM', () => {
  const env = () => ({
    DATABASE_URL: h.config.DATABASE_URL,
    CAIRN_ENCRYPTION_KEY: testEncryptionKey,
    LOG_LEVEL: 'info',
  });

  it('stops the web process cleanly and quickly', async () => {
    const p = run(procfileArgs('web'), { ...env(), PORT: '0' });
    await waitFor(p.output, /web listening/, p.child);
    p.child.kill('SIGTERM');
    const { code, ms } = await exitWithin(p.child, 25_000);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(25_000);
    expect(p.output()).toMatch(/"msg":"stopped"/);
  });

  it('stops the worker process cleanly and quickly', async () => {
    const p = run(procfileArgs('worker'), env());
    await waitFor(p.output, /worker started/, p.child);
    p.child.kill('SIGTERM');
    const { code, ms } = await exitWithin(p.child, 25_000);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(25_000);
  });

  it('web: stops accepting, finishes the request in flight, then closes', async () => {
    const gate = createGate();
    const web: WebHandle = await startTestWeb(h, { routes: probeRoutes(gate) });
    const inFlight = call(web.url, 'GET', '/v1/probe/slow');
    await gate.reached;
    const stopped = web.stop();
    // New connections are refused once the server stops listening.
    await expect(fetch(`${web.url}/healthz`)).rejects.toThrow();
    gate.open();
    const res = await inFlight;
    expect(res).toMatchObject({ status: 200, body: { done: true } });
    await stopped;
  });
});

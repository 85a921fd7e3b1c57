// `npm start` as a newcomer runs it (src/start.ts: embedded Postgres, local-disk store, a demo
// environment), in a folder of the test's, on free ports, with only PATH and HOME from outside.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readlink, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { eventually } from './probes.ts';
import { freePort } from './own-postgres.ts';

const script = new URL('../../src/start.ts', import.meta.url).pathname;

export interface NpmStart {
  child: ChildProcess;
  /** Everything it has printed so far, stdout and stderr, as a terminal shows them. */
  out(): string;
  port: number;
  /** The environment it was started with: a second start in the same folder takes it too. */
  env: NodeJS.ProcessEnv;
  /** SIGTERM, as Ctrl-C in a terminal; answers its exit code and removes its embedded database. */
  stop(): Promise<number | null>;
}

/** `src/start.ts` run once in `dir` with `env`: answers its exit code and what it printed. */
export function runStart(dir: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

/** `npm start` in `dir`, once its banner (the demo secret key) is printed. */
export async function npmStart(dir: string, extra: NodeJS.ProcessEnv = {}): Promise<NpmStart> {
  const [port, pgPort] = [await freePort(), await freePort()];
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    PORT: String(port),
    CAIRN_EMBEDDED_PG_PORT: String(pgPort),
    ...extra,
  };
  const child = spawn(process.execPath, [script], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  let stopped: Promise<number | null> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      let code = child.exitCode;
      if (code === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        [code] = (await exited) as [number | null];
      }
      // The embedded cluster's data lives outside `dir` (where the postgres user can reach it).
      const data = await readlink(join(dir, '.data', 'postgres')).catch(() => undefined);
      if (data) await rm(dirname(data), { recursive: true, force: true });
      return code;
    })());
  try {
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`npm start exited:\n${out}`);
        return /secret key:\s+cairn_sk_test_\w+/.test(out) || undefined;
      },
      { timeoutMs: 90_000, what: 'the banner' },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { child, out: () => out, port, env, stop };
}

// Shared bench helpers: a scratch database on the configured Postgres, timing, the Procfile's
// commands and a process's memory as the kernel reports it.
import { randomBytes } from 'node:crypto';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import net from 'node:net';
import pg from 'pg';
import { loadConfig, type Config } from '../src/config.ts';
import { procfileArgs as procfile } from '../test/support/procfile.ts';

export const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export async function scratchDatabase(): Promise<{ config: Config; drop(): Promise<void> }> {
  const name = `cairn_bench_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: url.toString(),
    CAIRN_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
    LOG_LEVEL: 'silent',
  });
  return { config, drop: () => admin(`drop database if exists ${name} with (force)`) };
}

export const ms = (start: number) => performance.now() - start;

export const repoRoot = new URL('..', import.meta.url).pathname;

let warmed = false;

/** The node arguments of a Procfile process, its flags included, as the platform starts it. */
export function procfileArgs(role: 'web' | 'worker'): string[] {
  // Processes start as they do from a built slug: `npm run build` has filled the compile cache
  // (bin/process.js), so none of them carries Node's TypeScript stripper.
  if (!warmed) execFileSync(process.execPath, ['bin/process.js', 'warm'], { cwd: repoRoot, stdio: 'inherit' });
  warmed = true;
  return procfile(role);
}

const started: ChildProcess[] = [];

/**
 * A Procfile process (its command as the Procfile gives it, `flags` before the Procfile's own),
 * with `env` over this one's and its log in a file, as a log drain would take it.
 */
export function startProcfile(
  role: 'web' | 'worker',
  env: NodeJS.ProcessEnv,
  flags: readonly string[] = [],
): { child: ChildProcess; log: string } {
  const log = `${tmpdir()}/cairn-bench-${role}-${Date.now()}-${started.length}.log`;
  const child = spawn(process.execPath, [...flags, ...procfileArgs(role)], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', openSync(log, 'w'), 'inherit'],
  });
  started.push(child);
  return { child, log };
}

/** Stops a process startProcfile started (SIGTERM, as the platform stops one) and waits for its exit. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Stops every process startProcfile started that still runs. */
export async function stopStarted(): Promise<void> {
  await Promise.all(started.map(stopProcess));
}

/** A /proc/<pid>/status memory field (VmRSS, VmHWM…) in bytes; NaN when it has none (a zombie). */
export function procStatusBytes(pid: number, field: string): number {
  return (
    Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024
  );
}

export function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

export function report(title: string, rows: Record<string, string | number>): void {
  process.stdout.write(`\n${title}\n`);
  for (const [k, v] of Object.entries(rows))
    process.stdout.write(`  ${k.padEnd(44)} ${typeof v === 'number' ? v.toFixed(2) : v}\n`);
}

/** A TCP port nobody listens on now, for a process this bench starts. */
export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/**
 * POSTs JSON to `http://127.0.0.1:<port><prefix><path>` with `key` as the Bearer (when given) over
 * the agent's keep-alive connections; answers the status once the response has been read.
 */
export function jsonPoster(agent: http.Agent, port: number, key: string | undefined, prefix: string) {
  return (path: string, body: string | Buffer) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: `${prefix}${path}`,
          agent,
          headers: {
            ...(key ? { authorization: `Bearer ${key}` } : {}),
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}

/** Polls `probe` every `everyMs` until it answers something other than undefined or false (no fixed sleeps). */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 600_000,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

// Shared bench helpers: a scratch database on the configured Postgres, timing, the Procfile's
// commands and a process's memory as the kernel reports it.
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

// WEB_CONCURRENCY (web-cluster.ts): the Procfile's web command runs that many web processes on one
// port. Connections are shared out between them, /metrics sums their HTTP metrics (and reads
// Postgres once), a process that dies is replaced, and SIGTERM stops them all.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEncryptionKey } from '../support/config.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { procfileArgs } from '../support/procfile.ts';

let h: Harness;
let child: ChildProcess | undefined;
let out = '';
const root = new URL('../../', import.meta.url).pathname;

beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  for (const pid of listening().map((l) => l.pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await h?.close();
});

type Line = { pid: number; msg: string; port?: number };
const lines = (): Line[] =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
const listening = () => lines().filter((l) => l.msg === 'web listening');

/** A request on its own connection, so the primary hands each to the next process. */
function get(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      })
      .on('error', reject);
  });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('WEB_CONCURRENCY', () => {
  it('serves one port from several processes, sums their metrics, replaces the dead and stops on SIGTERM', async () => {
    child = spawn(process.execPath, procfileArgs('web'), {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: h.config.DATABASE_URL,
        CAIRN_ENCRYPTION_KEY: testEncryptionKey,
        CAIRN_METRICS_TOKEN: 'cluster-test-token',
        WEB_CONCURRENCY: '2',
        PORT: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    await eventually(() => expect(listening()).toHaveLength(2), { timeoutMs: 30_000 });
    const [a, b] = listening();
    expect(a!.pid).not.toBe(b!.pid);
    expect(a!.port).toBe(b!.port);
    const port = a!.port!;

    const answers = await Promise.all(Array.from({ length: 40 }, () => get(port, '/healthz')));
    expect(answers.every((r) => r.status === 200)).toBe(true);
    const servedBy = new Set(
      lines()
        .filter((l) => l.msg === 'request' && (l as { path?: string }).path === '/healthz')
        .map((l) => l.pid),
    );
    expect(servedBy).toEqual(new Set([a!.pid, b!.pid]));

    // Each process counted its own requests; the scrape answers their sum, and Postgres's figures once.
    const metrics = await get(port, '/metrics', { authorization: 'Bearer cluster-test-token' });
    expect(metrics.status).toBe(200);
    const healthz = [
      ...metrics.body.matchAll(/^cairn_http_request_duration_seconds_count\{[^}]*route="\/healthz"[^}]*\} (\d+)$/gm),
    ];
    expect(healthz.reduce((n, m) => n + Number(m[1]), 0)).toBe(40);
    expect(metrics.body.match(/^cairn_intake_pending /gm)).toHaveLength(1);

    // A process killed outright is replaced, and the port keeps answering meanwhile.
    process.kill(a!.pid, 'SIGKILL');
    await eventually(() => expect(listening()).toHaveLength(3), { timeoutMs: 30_000 });
    expect(lines().some((l) => l.msg === 'a web process died; starting another')).toBe(true);
    const after = await Promise.all(Array.from({ length: 10 }, () => get(port, '/healthz')));
    expect(after.every((r) => r.status === 200)).toBe(true);

    // SIGTERM to the primary stops every process, and the primary exits 0.
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const l of listening()) expect(alive(l.pid)).toBe(false);
  });
});

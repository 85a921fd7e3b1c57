// src/web.ts and workers/main.ts in their own OS processes, for tests that need several of them on
// one database.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { testEncryptionKey } from './config.ts';

export interface WebProcess {
  url: string;
  stop(): Promise<void>;
  /** SIGKILL: the process dies with requests in flight. */
  kill(): Promise<void>;
  /** Everything it wrote so far, stdout and stderr. */
  output(): string;
  /** The OS process id (its memory is /proc/{pid}/status). */
  pid: number;
  /** Resident set size now, in bytes, as /proc/{pid}/status says (VmRSS). */
  rss(): number;
}

/** `procfile`: start it as the Procfile does (bin/process.js web|worker), else the entry itself. */
export interface SpawnOptions {
  procfile?: boolean;
}

/** Starts src/web.ts on a free port; answers once it listens. */
export async function spawnWeb(
  databaseUrl: string,
  env: Record<string, string> = {},
  options: SpawnOptions = {},
): Promise<WebProcess> {
  const args = options.procfile ? ['bin/process.js', 'web'] : ['src/web.ts'];
  const p = await spawnProcess(args, databaseUrl, env, /"port":(\d+)[^\n]*"msg":"web listening"/);
  return {
    url: `http://127.0.0.1:${p.match[1]}`,
    stop: p.stop,
    kill: p.kill,
    output: p.output,
    pid: p.pid,
    rss: p.rss,
  };
}

/** Starts workers/main.ts; answers once its queues are worked. */
export async function spawnWorker(
  databaseUrl: string,
  env: Record<string, string> = {},
  options: SpawnOptions = {},
): Promise<Omit<WebProcess, 'url'>> {
  const args = options.procfile ? ['bin/process.js', 'worker'] : ['workers/main.ts'];
  const p = await spawnProcess(args, databaseUrl, env, /"msg":"worker started"/);
  return { stop: p.stop, kill: p.kill, output: p.output, pid: p.pid, rss: p.rss };
}

/** VmRSS of a live process, in bytes. */
export function rssOf(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for process ${pid}`);
  return Number(m[1]) * 1024;
}

async function spawnProcess(args: string[], databaseUrl: string, env: Record<string, string>, ready: RegExp) {
  const script = args.join(' ');
  const child: ChildProcess = spawn(process.execPath, args, {
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: databaseUrl,
      CAIRN_ENCRYPTION_KEY: testEncryptionKey,
      PORT: '0',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) resolve(m);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with code ${code}:\n${out}`)));
  });
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
  };
  const pid = child.pid!;
  return {
    match,
    pid,
    rss: () => rssOf(pid),
    output: () => out,
    /** SIGTERM, as the platform stops it. */
    stop: () => end('SIGTERM'),
    /** SIGKILL: the process dies with requests in flight. */
    kill: () => end('SIGKILL'),
  };
}

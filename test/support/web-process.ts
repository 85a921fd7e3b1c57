// src/web.ts and workers/main.ts in their own OS processes, for tests that need several of them on
// one database.
import { spawn, type ChildProcess } from 'node:child_process';
import { testEncryptionKey } from './config.ts';

export interface WebProcess {
  url: string;
  stop(): Promise<void>;
  /** SIGKILL: the process dies with requests in flight. */
  kill(): Promise<void>;
}

/** Starts src/web.ts on a free port; answers once it listens. */
export async function spawnWeb(databaseUrl: string, env: Record<string, string> = {}): Promise<WebProcess> {
  const p = await spawnProcess('src/web.ts', databaseUrl, env, /"port":(\d+)[^\n]*"msg":"web listening"/);
  return { url: `http://127.0.0.1:${p.match[1]}`, stop: p.stop, kill: p.kill };
}

/** Starts workers/main.ts; answers once its queues are worked. */
export async function spawnWorker(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<Omit<WebProcess, 'url'>> {
  const p = await spawnProcess('workers/main.ts', databaseUrl, env, /"msg":"worker started"/);
  return { stop: p.stop, kill: p.kill };
}

async function spawnProcess(script: string, databaseUrl: string, env: Record<string, string>, ready: RegExp) {
  const child: ChildProcess = spawn(process.execPath, [script], {
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
  return {
    match,
    /** SIGTERM, as the platform stops it. */
    stop: () => end('SIGTERM'),
    /** SIGKILL: the process dies with requests in flight. */
    kill: () => end('SIGKILL'),
  };
}

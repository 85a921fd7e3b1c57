// src/web.ts in its own OS process, for tests that need several web processes on one database.
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
  const child: ChildProcess = spawn(process.execPath, ['src/web.ts'], {
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
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const port = /"port":(\d+)[^\n]*"msg":"web listening"/.exec(out)?.[1];
      if (port) resolve(`http://127.0.0.1:${port}`);
    });
    child.once('exit', () => reject(new Error(`web process exited:\n${out}`)));
  });
  return {
    url,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

// Which local port is taken, and by whom: for start-up errors that say what to do ("port 3000 is
// in use by pid 4242 (node src/start.ts): stop it, or choose another with PORT=3001"). The owner
// comes from Linux's /proc (the listening socket's inode, then the process holding it); elsewhere,
// or without the right to read another user's processes, only the port is named.
import { readdir, readFile, readlink } from 'node:fs/promises';
import { createServer, createConnection } from 'node:net';

/** Whether a TCP listener can be opened on `port` (on `host`, the address the service will bind). */
export function portFree(port: number, host?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    // Only "in use" means taken; no permission (a port under 1024) or no such address is another
    // problem, which the real listen reports in its own words.
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code !== 'EADDRINUSE'));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
export function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface Listener {
  pid: number;
  command: string;
}

/** The process listening on TCP `port`, when /proc says. */
export async function whoListens(port: number): Promise<Listener | undefined> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; the inode is the tenth field.
      if (f.length > 9 && f[3] === '0A' && parseInt(f[1]!.split(':')[1] ?? '', 16) === port) inodes.add(f[9]!);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const fds = await readdir(`/proc/${entry}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${entry}/fd/${fd}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) {
        const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
        // The program and its script only: further arguments may hold secrets.
        return { pid: Number(entry), command: cmdline.split('\0').filter(Boolean).slice(0, 2).join(' ').slice(0, 120) };
      }
    }
  }
  return undefined;
}

/** "pid 4242 (node src/start.ts)", or "another program" when /proc does not say. */
export async function describeListener(port: number): Promise<string> {
  const who = await whoListens(port);
  return who ? `pid ${who.pid} (${who.command || 'unknown command'})` : 'another program';
}

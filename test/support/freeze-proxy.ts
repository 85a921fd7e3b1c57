// A TCP proxy in front of Postgres that fails the way a network path does. `freeze()` stops
// forwarding without closing anything: each side's bytes wait in the sockets' buffers (as TCP
// retransmits them across a path that drops packets) and flow again on `thaw()`; a connection
// opened meanwhile is accepted and held. `refuse()` cuts every connection and each new one.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface FreezeProxy {
  /** `target` with the proxy's host and port. */
  url: string;
  freeze(): void;
  thaw(): void;
  refuse(): void;
  close(): Promise<void>;
}

type Mode = 'open' | 'frozen' | 'refusing';

export async function startFreezeProxy(target: string): Promise<FreezeProxy> {
  const to = new URL(target);
  let mode: Mode = 'open';
  const sockets = new Set<Socket>();
  const held: (() => void)[] = [];
  const server: Server = createServer((client) => {
    if (mode === 'refusing') return void client.destroy();
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    const open = () => {
      const upstream = connect(Number(to.port || 5432), to.hostname);
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      client.pipe(upstream).on('error', () => client.destroy());
      upstream.pipe(client).on('error', () => upstream.destroy());
      client.on('error', () => upstream.destroy()).on('close', () => upstream.destroy());
      upstream.on('error', () => client.destroy()).on('close', () => client.destroy());
      if (mode === 'frozen') pause();
    };
    if (mode === 'frozen') {
      client.pause();
      held.push(open);
    } else open();
  });
  const pause = () => {
    for (const s of sockets) s.pause();
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(target);
  url.host = `127.0.0.1:${port}`;
  return {
    url: url.toString(),
    freeze() {
      mode = 'frozen';
      pause();
    },
    thaw() {
      mode = 'open';
      for (const s of sockets) s.resume();
      for (const open of held.splice(0)) open();
    },
    refuse() {
      mode = 'refusing';
      for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

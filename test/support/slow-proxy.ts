// A TCP proxy that delays every byte a client sends by a fixed time: an object store across a
// real network (a far region, TLS, a cold credential lookup) answers each request hundreds of
// milliseconds later than one on localhost does.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface SlowProxy {
  url: string;
  close(): Promise<void>;
}

export async function startSlowProxy(target: URL, delayMs: number): Promise<SlowProxy> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 80), target.hostname);
    sockets.add(client).add(upstream);
    // The same delay for every chunk keeps them in order.
    client.on('data', (chunk: Buffer) => setTimeout(() => upstream.write(chunk), delayMs));
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('end', () => setTimeout(end, delayMs));
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// A TCP proxy that delays every byte one way by a fixed time: an object store across a real
// network (a far region, TLS, a cold credential lookup) answers each request hundreds of
// milliseconds later than one on localhost does; delaying the answers instead holds responses
// that were already sent, as a network does when the server dies before they arrive.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface SlowProxy {
  url: string;
  close(): Promise<void>;
}

export async function startSlowProxy(
  target: URL,
  delayMs: number,
  delay: 'requests' | 'answers' = 'requests',
): Promise<SlowProxy> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 80), target.hostname);
    sockets.add(client).add(upstream);
    // The same delay for every chunk keeps them in order.
    const [from, to] = delay === 'requests' ? [client, upstream] : [upstream, client];
    from.on('data', (chunk: Buffer) => setTimeout(() => to.write(chunk), delayMs));
    if (delay === 'requests') upstream.pipe(client);
    else client.pipe(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('end', () => setTimeout(end, delayMs));
    // An upstream that dies drops the answers still held back: the client sees its connection cut.
    upstream.on('error', end).on('close', delay === 'answers' ? end : () => setTimeout(end, 0));
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

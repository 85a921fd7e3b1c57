// WEB_CONCURRENCY > 1: one `web` dyno runs that many web processes on one port through node:cluster
// (the primary accepts connections and hands them out in turn), so a dyno with several cores
// serves with all of them, as Heroku's Node.js guidance has it
// (https://devcenter.heroku.com/articles/node-concurrency). Each process is a whole web process
// (its own pools: CAIRN_DB_MAX_CONNECTIONS is per process), and processes already behave as one,
// as separate dynos do. The primary only supervises: it replaces a process that dies, stops them
// all on SIGTERM (shutdown.ts, as any process), and sums their HTTP metrics for /metrics.
import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Logger } from './log.ts';
import { onShutdown } from './shutdown.ts';

/** More deaths than this within a minute stop the dyno: the platform restarts it, and its logs say why. */
const maxRestartsPerMinute = 5;
const metricsRequest = 'cairn:cluster-metrics';

export function runWebCluster(processes: number, log: Logger): void {
  const aggregator = new AggregatorRegistry();
  let stopping = false;
  const deaths: number[] = [];
  for (let i = 0; i < processes; i++) cluster.fork();

  const running = () => Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
  /** Every process is sent SIGTERM (on Heroku each also gets its own); resolves once all have exited. */
  const stopAll = async () => {
    stopping = true;
    const exits = running().map((w) => new Promise((resolve) => w.once('exit', resolve)));
    for (const w of running()) w.process.kill('SIGTERM');
    await Promise.all(exits);
  };
  onShutdown(log, stopAll);

  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    const now = Date.now();
    deaths.push(now);
    while (deaths[0]! < now - 60_000) deaths.shift();
    if (deaths.length > maxRestartsPerMinute) {
      log.fatal({ pid: worker.process.pid, code, signal }, 'web processes keep dying; stopping the dyno');
      void stopAll().finally(() => process.exit(1));
      return;
    }
    log.error({ pid: worker.process.pid, code, signal }, 'a web process died; starting another');
    cluster.fork();
  });

  // A process answering /metrics asks for every process's HTTP metrics, summed.
  cluster.on('message', (worker, message: { type?: string; id?: number }) => {
    if (message?.type !== metricsRequest) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: metricsRequest, id: message.id, text }),
      (err: Error) => worker.send({ type: metricsRequest, id: message.id, error: err.message }),
    );
  });
  log.info({ processes }, 'web cluster started');
}

let nextRequest = 0;
const pending = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void }>();

/**
 * In a cluster's web process: the HTTP metrics of all its processes, summed (prom-client's
 * AggregatorRegistry, run by the primary). Outside a cluster: undefined.
 */
export function clusterMetrics(timeoutMs = 5000): Promise<string> | undefined {
  if (!cluster.isWorker) return undefined;
  const id = nextRequest++;
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new Error('the web primary did not answer for metrics within 5 s'));
    }, timeoutMs);
    pending.set(id, {
      resolve: (text) => (clearTimeout(timer), resolve(text)),
      reject: (err) => (clearTimeout(timer), reject(err)),
    });
    process.send!({ type: metricsRequest, id });
  });
}

let joined = false;
/** In a cluster's web process: answers the primary's metric requests for `registry`, and reads its replies. */
export function joinClusterMetrics(registry: Registry): void {
  if (!cluster.isWorker || joined) return;
  joined = true;
  AggregatorRegistry.setRegistries([registry]);
  // Installs prom-client's listener that answers the primary's requests for this process's metrics.
  new AggregatorRegistry();
  process.on('message', (message: { type?: string; id?: number; text?: string; error?: string }) => {
    if (message?.type !== metricsRequest || message.id === undefined) return;
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.error !== undefined) waiter?.reject(new Error(message.error));
    else waiter?.resolve(message.text ?? '');
  });
}

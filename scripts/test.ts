// The body of `npm test`: provision what the tests talk to (scripts/provision.sh: Postgres and a
// real S3 server), run vitest against them, stop what provisioning started for this run, and end
// with one line, "N passed, N failed" (plus ", N skipped" when some were). Extra arguments go to
// vitest: `npm test -- test/backups`. With only the unit project (`npm run test:unit`, which is
// `--project unit`), nothing is provisioned: those tests talk to no server.
// .ci/run imports readSummary/summaryLine to print the same line.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { constants } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
export const reportPath = path.join(root, '.data', 'test-report.json');

// What the tests use unless the caller points them elsewhere (the servers provision.sh starts).
const testEnvDefaults: Record<string, string> = {
  AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${process.env.CAIRN_TEST_S3_PORT || '7480'}`,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'cairn-test',
  AWS_SECRET_ACCESS_KEY: 'cairn-test-secret-key',
  CAIRN_S3_FORCE_PATH_STYLE: 'true',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
};

interface JsonReport {
  numPassedTests?: number;
  numFailedTests?: number;
  numPendingTests?: number;
  numTodoTests?: number;
  testResults?: { status?: string; assertionResults?: { status?: string }[] }[];
}

export interface Summary {
  passed: number;
  failed: number;
  skipped: number;
}

/** The counts in vitest's JSON report, or undefined when there is no readable report. */
export function readSummary(file: string = reportPath): Summary | undefined {
  let report: JsonReport;
  try {
    report = JSON.parse(readFileSync(file, 'utf8')) as JsonReport;
  } catch {
    return undefined;
  }
  // A file that fails outside any test (an import error, a failing beforeAll) has no failed test
  // to count; count it once so that "0 failed" never sits beside a red run.
  const failedFiles = (report.testResults ?? []).filter(
    (file) => file.status === 'failed' && !(file.assertionResults ?? []).some((t) => t.status === 'failed'),
  ).length;
  return {
    passed: report.numPassedTests ?? 0,
    failed: (report.numFailedTests ?? 0) + failedFiles,
    skipped: (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0),
  };
}

export function summaryLine(summary: Summary | undefined): string {
  if (!summary) return '0 passed, 1 failed';
  const line = `${summary.passed} passed, ${summary.failed} failed`;
  return summary.skipped > 0 ? `${line}, ${summary.skipped} skipped` : line;
}

/** The vitest projects named by `--project x` or `--project=x` (none: every project). */
export function projectsNamed(args: readonly string[]): string[] {
  const named: string[] = [];
  args.forEach((arg, i) => {
    if (arg === '--project' && args[i + 1] !== undefined) named.push(args[i + 1]!);
    else if (arg.startsWith('--project=')) named.push(arg.slice('--project='.length));
  });
  return named;
}

const provision = path.join(root, 'scripts', 'provision.sh');

/**
 * A shared lock on the users file of each service provisioning may start (provision.sh
 * users-lock), held for the whole run: `provision.sh stop` stops a service only when no run holds
 * it. The lock belongs to the open file, so flock(1) takes it on our descriptor and exits, and it
 * lasts until we close it (or exit). A service the caller points at (DATABASE_URL,
 * AWS_ENDPOINT_URL_S3) is none of provisioning's business.
 */
function holdUsersLocks(): number[] {
  const services = [
    ...(process.env.DATABASE_URL ? [] : ['postgres']),
    ...(process.env.AWS_ENDPOINT_URL_S3 ? [] : ['s3']),
  ];
  return services.map((service) => {
    const file = execFileSync('bash', [provision, 'users-lock', service], { encoding: 'utf8' }).trim();
    const fd = openSync(file, 'a');
    const locked = spawnSync('flock', ['-s', '3'], { stdio: ['ignore', 'inherit', 'inherit', fd] });
    if (locked.status !== 0) throw new Error(`test: could not take a shared lock on ${file}`);
    return fd;
  });
}

let current: ChildProcess | undefined;
let interrupted: NodeJS.Signals | undefined;

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env, stdio: 'inherit' });
    current = child;
    child.on('error', (err) => {
      console.error(`test: could not run ${command}: ${err.message}`);
      resolve(127);
    });
    child.on('exit', (code, signal) => {
      current = undefined;
      resolve(code ?? 128 + (signal ? constants.signals[signal] : 0));
    });
  });
}

async function main(): Promise<number> {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      interrupted = signal;
      current?.kill(signal);
    });
  }
  const args = process.argv.slice(2);
  const projects = projectsNamed(args);
  if (projects.length > 0 && projects.every((p) => p === 'unit'))
    return finish(await runVitest(args, { ...process.env }));

  const locks = holdUsersLocks();
  let code: number;
  try {
    // The caller's own environment: provision.sh leaves alone what DATABASE_URL or
    // AWS_ENDPOINT_URL_S3 already point at, and marks what it starts as this run's.
    const provisioned = await run('bash', [provision], { ...process.env, CAIRN_TEST_RUN: '1' });
    if (interrupted) return 128 + constants.signals[interrupted];
    if (provisioned !== 0) {
      console.error(`test: provisioning failed (exit ${provisioned}); no test ran`);
      return provisioned;
    }
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const [name, value] of Object.entries(testEnvDefaults)) {
      if (!env[name]) env[name] = value;
    }
    code = await runVitest(args, env);
  } finally {
    // What provisioning started for this run stops with it, unless another run still uses it.
    for (const fd of locks) closeSync(fd);
    const stopped = spawnSync('bash', [provision, 'stop'], { cwd: root, env: process.env, stdio: 'inherit' });
    if (stopped.status !== 0) console.error(`test: stopping what provisioning started failed (exit ${stopped.status})`);
  }
  return finish(code);
}

/** vitest's exit code. */
async function runVitest(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  // Anything the tests spawn as `node` gets this project's Node 24, not the system's.
  const bin = path.join(root, 'node_modules', '.bin');
  if (!(env.PATH ?? '').split(path.delimiter).includes(bin)) env.PATH = `${bin}${path.delimiter}${env.PATH ?? ''}`;

  mkdirSync(path.dirname(reportPath), { recursive: true });
  rmSync(reportPath, { force: true });
  // vitest's bin, run by this same Node rather than whatever `node` its shebang finds first.
  const vitest = realpathSync(path.join(bin, 'vitest'));
  return run(
    process.execPath,
    [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${reportPath}`, ...args],
    env,
  );
}

/** Prints the summary line (the run's last) and answers the exit code of the run. */
function finish(code: number): number {
  const summary = readSummary();
  if (!summary) console.error(`test: vitest wrote no report (${path.relative(root, reportPath)})`);
  else if (summary.passed + summary.failed === 0) console.error('test: no test ran');
  else if (code !== 0 && summary.failed === 0) console.error('test: vitest failed outside the tests (see above)');
  console.log(summaryLine(summary));
  if (code !== 0) return code;
  return summary && summary.failed === 0 && summary.passed > 0 ? 0 : 1;
}

if (import.meta.main) {
  process.exitCode = await main();
}

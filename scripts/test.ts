// The body of `npm test`: provision what the tests talk to (scripts/provision.sh: Postgres and a
// real S3 server), run vitest against them, and end with one line, "N passed, N failed" (plus
// ", N skipped" when some were). Extra arguments go to vitest: `npm test -- test/backups`.
// .ci/run imports readSummary/summaryLine to print the same line.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
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

  // The caller's own environment: provision.sh leaves alone what DATABASE_URL or
  // AWS_ENDPOINT_URL_S3 already point at.
  const provisioned = await run('bash', [path.join(root, 'scripts', 'provision.sh')], process.env);
  if (interrupted) return 128 + constants.signals[interrupted];
  if (provisioned !== 0) {
    console.error(`test: provisioning failed (exit ${provisioned}); no test ran`);
    return provisioned;
  }

  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [name, value] of Object.entries(testEnvDefaults)) {
    if (!env[name]) env[name] = value;
  }
  // Anything the tests spawn as `node` gets this project's Node 24, not the system's.
  const bin = path.join(root, 'node_modules', '.bin');
  if (!(env.PATH ?? '').split(path.delimiter).includes(bin)) env.PATH = `${bin}${path.delimiter}${env.PATH ?? ''}`;

  mkdirSync(path.dirname(reportPath), { recursive: true });
  rmSync(reportPath, { force: true });
  // vitest's bin, run by this same Node rather than whatever `node` its shebang finds first.
  const vitest = realpathSync(path.join(bin, 'vitest'));
  const code = await run(
    process.execPath,
    [
      vitest,
      'run',
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${reportPath}`,
      ...process.argv.slice(2),
    ],
    env,
  );

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

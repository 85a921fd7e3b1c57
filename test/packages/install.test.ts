// The published packages as a user gets them: scripts/packages builds and packs @cairnhq/sdk and
// @cairnhq/cli, npm installs both tarballs into an empty project, and then, under every Node on this
// machine (the project's 24, and Debian's 20 where it is installed):
// - a plain ESM script imports the SDK and calls a running Cairn (create, list, capture, an error code);
// - the installed `cairn` lists end users, names a down server, and decrypts a sealed backup offline;
// - a TypeScript consumer type-checks against the declarations alone (no zod, no Node types), and
//   a wrong field is an error, so the types are real and not `any`;
// - headless Chromium loads `@cairnhq/sdk/browser` from another origin and signs a user in and out.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPackages } from '../../scripts/packages/build.ts';
import { seal } from '../../src/crypto.ts';
import { dataKeyContext } from '../../src/domain/backups/downloads/download.ts';
import { encryptStream } from '../../src/domain/backups/format/format.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { testEncryptionKey, testKeyring } from '../support/config.ts';
import { launchChromium } from '../support/chromium.ts';
import { createTestEnv, type Harness, useWeb } from '../support/harness.ts';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'cairn-packages-'));
const project = join(dir, 'project');
const projectNode = join(root, 'node_modules/.bin/node');

/** Every Node a user of the packages might run: the project's, and the system's if it is older. */
function nodes(): string[] {
  const found = [projectNode];
  if (existsSync('/usr/bin/node')) found.push('/usr/bin/node');
  return found;
}

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let tarballs: { sdk: string; cli: string };

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  tarballs = await buildPackages(join(dir, 'tarballs'));
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // commander is the one dependency from the registry; the CI's `npm ci` already has it cached.
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarballs.sdk, tarballs.cli], {
    cwd: project,
  });
  env = await createTestEnv(h.db);
}, 180_000);

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
});

function folderBytes(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.size;
  return readdirSync(path).reduce((sum, name) => sum + folderBytes(join(path, name)), 0);
}

async function node(bin: string, args: string[], vars: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(bin, args, { cwd: project, env: { PATH: process.env.PATH!, ...vars } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('the packed tarballs', () => {
  it('install only the two packages and commander, in well under a megabyte, with no TypeScript sources', () => {
    const installed = readdirSync(join(project, 'node_modules')).filter((n) => !n.startsWith('.'));
    expect(installed.sort()).toEqual(['@cairnhq', 'commander']);
    expect(readdirSync(join(project, 'node_modules/@cairnhq')).sort()).toEqual(['cli', 'sdk']);
    expect(folderBytes(join(project, 'node_modules'))).toBeLessThan(1024 * 1024);
    const sdkFiles = readdirSync(join(project, 'node_modules/@cairnhq/sdk/dist'));
    expect(sdkFiles.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    const sdkPackage = JSON.parse(readFileSync(join(project, 'node_modules/@cairnhq/sdk/package.json'), 'utf8'));
    expect(sdkPackage).toMatchObject({
      name: '@cairnhq/sdk',
      type: 'module',
      types: './dist/index.d.ts',
      engines: { node: '>=20' },
    });
    expect(sdkPackage.dependencies).toBeUndefined();
    expect(Object.keys(sdkPackage.exports)).toEqual(['.', './browser', './package.json']);
  });
});

describe.each(nodes())('with %s', (bin) => {
  it('runs a Node 20 or newer', async () => {
    const { stdout } = await node(bin, ['-p', 'process.versions.node']);
    expect(Number(stdout.split('.')[0])).toBeGreaterThanOrEqual(20);
  });

  it('the SDK, imported by a plain script, calls Cairn and reports an error answer by its code', async () => {
    writeFileSync(
      join(project, 'use.mjs'),
      `import { createCairn, CairnApiError } from '@cairnhq/sdk';
const cairn = createCairn({ baseUrl: process.env.URL, secretKey: process.env.KEY });
const env = process.env.ENV;
const user = await cairn.endUsers.create(env, { email: process.env.EMAIL, password: 'a long and unusual passphrase 7', email_verified: true });
const page = await cairn.endUsers.list(env, { email: process.env.EMAIL });
const captured = await cairn.errorGroups.capture(env, { event_time: new Date().toISOString(), exception_type: 'TypeError', message: 'x is undefined', stack: 'TypeError: x is undefined\\n    at buy (https://shop.example/app.js:1:10)' });
let missing;
try { await cairn.endUsers.get(env, 'eu_00000000000000000000000000'); } catch (err) { missing = err instanceof CairnApiError ? [err.status, err.code] : String(err); }
console.log(JSON.stringify({ user, listed: page.end_users.map((u) => u.id), captured, missing }));
`,
    );
    const email = `sdk-${randomBytes(4).toString('hex')}@example.com`;
    const r = await node(bin, ['use.mjs'], { URL: web.url, KEY: env.secretKey, ENV: env.env.name, EMAIL: email });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as {
      user: { id: string; email: string };
      listed: string[];
      captured: { uid: string };
      missing: [number, string];
    };
    expect(out.user.email).toBe(email);
    expect(out.listed).toEqual([out.user.id]);
    expect(out.captured.uid).toMatch(/\S/);
    expect(out.missing).toEqual([404, 'not_found']);
  });

  it('the installed cairn lists end users, and says what to do when the server is down or a command is the operator’s', async () => {
    const vars = { CAIRN_API_URL: web.url, CAIRN_SECRET_KEY: env.secretKey, CAIRN_ENV: env.env.name };
    const cairn = join(project, 'node_modules/.bin/cairn');
    const listed = await node(bin, [cairn, 'end-users', 'list', '--json'], vars);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { end_users: unknown[] }).end_users.length).toBeGreaterThan(0);

    const version = await node(bin, [cairn, '--version']);
    expect(version.stdout.trim()).toBe('0.1.0');

    const down = await node(bin, [cairn, 'end-users', 'list'], { ...vars, CAIRN_API_URL: 'http://127.0.0.1:1' });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('could not reach the Cairn API at http://127.0.0.1:1');
    expect(down.stderr).toContain('set CAIRN_API_URL');

    const admin = await node(bin, [cairn, 'admin', 'status'], vars);
    expect(admin.code).not.toBe(0);
    expect(admin.stderr).toContain("unknown command 'admin'");
    const help = await node(bin, [cairn, '--help']);
    expect(help.stdout).toContain("run in the service's folder");
  });

  it('the installed cairn decrypts a sealed backup offline with the service key', async () => {
    const backupId = `backup_${randomBytes(13).toString('hex').slice(0, 26)}`;
    const dump = gzipSync(Buffer.from(`-- PostgreSQL database dump\n${'INSERT INTO t VALUES (1);\n'.repeat(20_000)}`));
    const dataKey = randomBytes(32);
    const sealedFile = join(dir, `${backupId}-${bin.length}.cairnbk`);
    const chunks: Buffer[] = [];
    for await (const c of encryptStream(Readable.from([dump]), dataKey, 64 * 1024)) chunks.push(c);
    writeFileSync(sealedFile, Buffer.concat(chunks));
    const { currentId } = testKeyring();
    writeFileSync(
      `${sealedFile}.key.json`,
      JSON.stringify({
        format: 'cairn-bk1',
        backup_id: backupId,
        key_id: currentId,
        wrapped_key: seal(testKeyring(), dataKey, dataKeyContext(backupId)),
      }),
    );
    const cairn = join(project, 'node_modules/.bin/cairn');
    const out = join(dir, `${backupId}-${bin.length}.sql.gz`);
    const wrongKey = await node(bin, [cairn, 'backups', 'decrypt', sealedFile, '-o', out], {
      CAIRN_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
    });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain('does not open with this CAIRN_ENCRYPTION_KEY');
    expect(existsSync(out)).toBe(false);

    const r = await node(bin, [cairn, 'backups', 'decrypt', sealedFile, '-o', out], {
      CAIRN_ENCRYPTION_KEY: testEncryptionKey,
    });
    expect(r.code).toBe(0);
    const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(digest(readFileSync(out))).toBe(digest(dump));
  });
});

describe('the declarations', () => {
  it('type-check a TypeScript consumer without zod or Node types, and reject a wrong field', async () => {
    writeFileSync(
      join(project, 'typed.ts'),
      `import { createCairn, CairnApiError, type WebhookEndpointInput } from '@cairnhq/sdk';
import { createCairnBrowser, type SessionWithToken } from '@cairnhq/sdk/browser';

const cairn = createCairn({ baseUrl: 'http://localhost:3000', secretKey: 'cairn_sk_x' });
export async function use(env: string): Promise<string> {
  const backup = await cairn.backups.create(env);
  const state: 'pending' | 'running' | 'succeeded' | 'failed' = backup.state;
  const { end_users } = await cairn.endUsers.list(env);
  const verified: boolean = end_users[0]!.email_verified;
  // @ts-expect-error email_verified is a boolean, not a string
  const wrong: string = end_users[0]!.email_verified;
  const input: WebhookEndpointInput = { url: 'https://example.com/hook', event_types: ['backup.failed'] };
  // @ts-expect-error not an event type
  const badInput: WebhookEndpointInput = { url: 'https://example.com/hook', event_types: ['backup.exploded'] };
  const page = createCairnBrowser({ baseUrl: 'https://auth.example.com', publishableKey: 'cairn_pk_x' });
  const signedIn: SessionWithToken = await page.signIn('ada@example.com', 'pw');
  const e = new CairnApiError(404, { code: 'not_found' });
  return [state, verified, wrong, input.url, badInput.url, signedIn.session.state, e.code].join();
}
`,
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          lib: ['es2022', 'dom'],
          module: 'nodenext',
          moduleResolution: 'nodenext',
          types: [],
          strict: true,
          noEmit: true,
        },
        files: ['typed.ts'],
      }),
    );
    const r = await node(projectNode, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json']);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});

/** What the page's module put on `window`: the installed package's browser entry. */
type BrowserSdk = typeof import('../../src/sdk/browser.ts');

describe('in a browser', () => {
  let browser: Browser;
  let site: Server;

  beforeAll(async () => {
    // The application's origin serves the installed package's files; Cairn is another origin.
    const dist = join(project, 'node_modules/@cairnhq/sdk/dist');
    site = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path.startsWith('/sdk/') && /^[a-z-]+\.js$/.test(path.slice(5))) {
        res.writeHead(200, { 'content-type': 'text/javascript' });
        res.end(readFileSync(join(dist, path.slice(5))));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><html lang="en"><title>Shop</title><p>shop</p>
<script type="module">import * as sdk from '/sdk/browser.js'; window.cairnSdk = sdk;</script></html>`);
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((r) => (site ? site.close(() => r()) : r()));
  });

  it('@cairnhq/sdk/browser signs a user in with the publishable key across origins, then out', async () => {
    const email = `page-${randomBytes(4).toString('hex')}@example.com`;
    const password = 'a long and unusual passphrase 9';
    const setup = await node(
      projectNode,
      [
        '--input-type=module',
        '-e',
        `import { createCairn } from '@cairnhq/sdk';
await createCairn({ baseUrl: process.env.URL, secretKey: process.env.KEY }).endUsers.create(process.env.ENV, { email: process.env.EMAIL, password: process.env.PASSWORD, email_verified: true });`,
      ],
      { URL: web.url, KEY: env.secretKey, ENV: env.env.name, EMAIL: email, PASSWORD: password },
    );
    expect(setup.stderr).toBe('');
    const page = await browser.newPage();
    const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    await page.goto(`${siteUrl}/`);
    await page.waitForFunction(() => 'cairnSdk' in globalThis);
    // Cairn as `localhost`, the page as 127.0.0.1: two origins, so each call is cross-origin.
    const apiUrl = web.url.replace('127.0.0.1', 'localhost');
    const result = await page.evaluate(
      async ({ apiUrl, publishableKey, email, password }) => {
        const { createCairnBrowser, CairnApiError } = (globalThis as unknown as { cairnSdk: BrowserSdk }).cairnSdk;
        const cairn = createCairnBrowser({ baseUrl: apiUrl, publishableKey });
        const signedIn = await cairn.signIn(email, password);
        const current = await cairn.currentSession(signedIn.session_token);
        await cairn.signOut(signedIn.session_token);
        let after: unknown;
        try {
          await cairn.currentSession(signedIn.session_token);
        } catch (err) {
          after = err instanceof CairnApiError ? [err.status, err.code] : String(err);
        }
        let wrong: unknown;
        try {
          await cairn.signIn(email, 'not the password at all');
        } catch (err) {
          wrong = err instanceof CairnApiError ? err.status : String(err);
        }
        return {
          user: current.user.email,
          state: current.session.state,
          origin: (globalThis as unknown as { location: { origin: string } }).location.origin,
          after,
          wrong,
        };
      },
      { apiUrl, publishableKey: env.publishableKey, email, password },
    );
    await page.close();
    expect(result.origin).toBe(siteUrl);
    expect(result.user).toBe(email);
    expect(result.state).toBe('active');
    expect(result.after).toEqual([401, 'unauthorized']);
    expect(result.wrong).toBe(401);
  });
});

describe('with a bundler', () => {
  it("bundles @cairnhq/sdk/browser for a page with nothing of Node's in it", async () => {
    writeFileSync(
      join(project, 'page.mjs'),
      "import { createCairnBrowser } from '@cairnhq/sdk/browser';\nwindow.cairn = createCairnBrowser({ baseUrl: location.origin, publishableKey: 'cairn_pk_x' });\n",
    );
    const result = await build({
      entryPoints: [join(project, 'page.mjs')],
      absWorkingDir: project,
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.every((f) => f === 'page.mjs' || f.startsWith('node_modules/@cairnhq/sdk/dist/'))).toBe(true);
    // Only what the page uses: the secret-key APIs stay out of its bundle.
    expect(inputs.some((f) => f.endsWith('/backups.js'))).toBe(false);
    expect(result.outputFiles[0]!.text).toContain('/v1/client/sign-in/password');
  });
});

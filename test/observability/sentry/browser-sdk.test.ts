// The real @sentry/browser in headless Chromium (Debian's chromium, driven by playwright-core), on
// a page served from another origin than Cairn's: a minified bundle throws, the SDK posts its
// envelope across origins, and the event comes back mapped through the source map uploaded for the
// bundle's URL (original file, line and function), with the page URL's token scrubbed.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../../src/domain/tenancy/envs.ts';
import { call, createHarness, createTestEnv, type Harness } from '../../support/harness.ts';
import { eventually } from '../../support/probes.ts';
import { envBase, startStack, type Stack } from '../support.ts';

let h: Harness;
let stack: Stack;
let env: CreatedEnv;
let browser: Browser;
let site: Server;
let siteUrl: string;
const dir = mkdtempSync(join(tmpdir(), 'cairn-browser-sdk-'));
const release = 'web@1.0.0';

beforeAll(async () => {
  h = await createHarness();
  stack = await startStack(h);
  env = await createTestEnv(h.db);
  await build({
    entryPoints: ['test/observability/sentry/fixtures/browser-app.js'],
    bundle: true,
    minify: true,
    sourcemap: 'external',
    format: 'iife',
    platform: 'browser',
    outfile: join(dir, 'app.min.js'),
    logLevel: 'silent',
  });
  // The application's own origin: its page and its bundle (Cairn's web is another port, another origin).
  site = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/app.min.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(readFileSync(join(dir, 'app.min.js')));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><html lang="en"><title>Shop</title>
<script>window.CAIRN_DSN = ${JSON.stringify(dsn())}; window.CAIRN_RELEASE = ${JSON.stringify(release)};</script>
<button id="buy">Buy</button><p id="total"></p><p id="status"></p>
<script src="/app.min.js"></script></html>`);
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await new Promise<void>((r) => (site ? site.close(() => r()) : r()));
  await stack?.stop();
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

// Cairn as `localhost`, the page as 127.0.0.1: two origins, so the SDK's request is cross-origin.
const dsn = () => {
  const url = new URL(stack.web.url);
  return `http://${env.clientKey.publicKey}@localhost:${url.port}/${env.clientKey.projectNumber}`;
};

interface Frame {
  function?: string;
  file?: string;
  line?: number;
  generated?: { file?: string };
  unmapped_reason?: string;
}

describe('@sentry/browser', () => {
  it("reports a minified bundle's error across origins, mapped through the map uploaded for its URL", async () => {
    const map = JSON.parse(readFileSync(join(dir, 'app.min.js.map'), 'utf8')) as { version: 3 };
    const uploaded = await call(stack.web.url, 'PUT', `${envBase(env)}/releases/${release}/source_maps`, {
      key: env.secretKey,
      body: { file: `${siteUrl}/app.min.js`, source_map: map },
    });
    expect(uploaded.status).toBe(201);

    const page = await browser.newPage();
    const posted: string[] = [];
    page.on('response', (r) => {
      if (r.url().includes('/envelope/')) posted.push(`${r.status()} ${r.headers()['access-control-allow-origin']}`);
    });
    await page.goto(`${siteUrl}/checkout?session_token=tok_live_8f7e6d5c4b3a2910`);
    await page.waitForFunction("document.getElementById('status')?.textContent === 'ready'");
    await page.click('#buy');

    const events = await eventually(
      async () => {
        const groups = await call<{ error_groups: { name: string }[] }>(
          stack.web.url,
          'GET',
          `${envBase(env)}/error_groups`,
          { key: env.secretKey },
        );
        const group = groups.body.error_groups[0];
        if (!group) return undefined;
        const list = await call<{ error_events: Record<string, unknown>[] }>(
          stack.web.url,
          'GET',
          `/v1/${group.name}/error_events`,
          { key: env.secretKey },
        );
        return list.body.error_events.length > 0 ? list.body.error_events : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    await page.close();
    // The event, and the session the SDK opens at load (dropped): each answered to the page's origin.
    expect(posted.length).toBeGreaterThanOrEqual(2);
    for (const p of posted) expect(p).toBe(`200 ${siteUrl}`);

    const event = events[0] as {
      exception_type: string;
      message: string;
      stack_frames: Frame[];
      sentry: { request?: { url?: string; headers?: Record<string, string> }; platform?: string };
    };
    expect(event.exception_type).toBe('TypeError');
    expect(event.message).toMatch(/rate/);
    const thrower = event.stack_frames.at(-1)!;
    expect(thrower).toMatchObject({
      function: 'applyDiscount',
      file: expect.stringMatching(/test\/observability\/sentry\/fixtures\/browser-app\.js$/),
      line: 9,
      generated: { file: `${siteUrl}/app.min.js` },
    });
    expect(event.stack_frames.some((f) => f.function === 'checkout')).toBe(true);
    expect(event.sentry.platform).toBe('javascript');
    expect(event.sentry.request?.url).toBe(`${siteUrl}/checkout?session_token=[Filtered]`);
    expect(JSON.stringify(event)).not.toContain('tok_live_8f7e6d5c4b3a2910');
  });
});

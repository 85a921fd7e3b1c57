// The real @sentry/browser in headless Chromium (Debian's chromium, driven by playwright-core), on
// a page served from another origin than Cairn's: a minified bundle throws, the SDK posts its
// envelope across origins, and the event comes back mapped through the source map uploaded for the
// bundle's URL (original file, line and function), with the page URL's token scrubbed; and a
// bundle whose debug ids `sentry-cli sourcemaps inject` wrote is mapped by them, whatever its URL
// and its release.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../support/chromium.ts';
import { call } from '../../support/harness.ts';
import { eventually } from '../../support/probes.ts';
import { envBase, useStack } from '../support.ts';

const t = useStack();
let browser: Browser;
let site: Server;
let siteUrl: string;
const dir = mkdtempSync(join(tmpdir(), 'cairn-browser-sdk-'));
const release = 'web@1.0.0';

const bundle = (outfile: string) =>
  build({
    entryPoints: ['test/errors/sentry/fixtures/browser-app.js'],
    bundle: true,
    minify: true,
    sourcemap: 'external',
    format: 'iife',
    platform: 'browser',
    outfile,
    logLevel: 'silent',
  });

beforeAll(async () => {
  await bundle(join(dir, 'app.min.js'));
  // The second build, given debug ids by the real sentry-cli (in the bundle and in its map).
  mkdirSync(join(dir, 'static'));
  await bundle(join(dir, 'static', 'bundle.js'));
  await promisify(execFile)('node_modules/.bin/sentry-cli', ['sourcemaps', 'inject', join(dir, 'static')]);
  // The application's own origin: its page and its bundle (Cairn's web is another port, another origin).
  site = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path.endsWith('.js')) {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(readFileSync(join(dir, path === '/static/bundle.js' ? 'static/bundle.js' : 'app.min.js')));
      return;
    }
    // /v2 is the debug-id build, under a release no map was uploaded for.
    const v2 = path === '/v2';
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><html lang="en"><title>Shop</title>
<script>window.CAIRN_DSN = ${JSON.stringify(dsn())}; window.CAIRN_RELEASE = ${JSON.stringify(v2 ? 'web@2.0.0' : release)};</script>
<button id="buy">Buy</button><p id="total"></p><p id="status"></p>
<script src="${v2 ? '/static/bundle.js' : '/app.min.js'}"></script></html>`);
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await new Promise<void>((r) => (site ? site.close(() => r()) : r()));
  rmSync(dir, { recursive: true, force: true });
});

// Cairn as `localhost`, the page as 127.0.0.1: two origins, so the SDK's request is cross-origin.
const dsn = () => {
  const url = new URL(t.s.web.url);
  return `http://${t.env.clientKey.publicKey}@localhost:${url.port}/${t.env.clientKey.projectNumber}`;
};

interface Frame {
  function?: string;
  file?: string;
  line?: number;
  generated?: { file?: string };
  unmapped_reason?: string;
}

/** Opens the page, clicks "Buy", and answers the stored event the SDK sent, and what Cairn answered the page. */
async function clickAndRead(path: string): Promise<{ event: StoredEvent; answers: string[] }> {
  const page = await browser.newPage();
  const answers: string[] = [];
  const ids: string[] = [];
  page.on('response', (r) => {
    if (r.url().includes('/envelope/')) answers.push(`${r.status()} ${r.headers()['access-control-allow-origin']}`);
  });
  // The SDK names each event in its envelope's header: those are the ids to read back.
  page.on('request', (r) => {
    const lines = r.url().includes('/envelope/') ? (r.postData() ?? '').split('\n') : [];
    if (lines[1]?.includes('"type":"event"')) ids.push((JSON.parse(lines[0]!) as { event_id: string }).event_id);
  });
  await page.goto(`${siteUrl}${path}`);
  await page.waitForFunction("document.getElementById('status')?.textContent === 'ready'");
  await page.click('#buy');
  const event = await eventually(
    async () => {
      for (const id of ids) {
        const res = await call<StoredEvent>(t.s.web.url, 'GET', `${envBase(t.env)}/error_groups/-/error_events/${id}`, {
          key: t.env.secretKey,
        });
        if (res.status === 200) return res.body;
      }
      return undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  await page.close();
  return { event, answers };
}

interface StoredEvent {
  exception_type: string;
  message: string;
  release?: string;
  stack_frames: Frame[];
  sentry: {
    request?: { url?: string };
    platform?: string;
    debug_ids?: Record<string, string>;
  };
}

describe('@sentry/browser', () => {
  it("reports a minified bundle's error across origins, mapped through the map uploaded for its URL", async () => {
    const map = JSON.parse(readFileSync(join(dir, 'app.min.js.map'), 'utf8')) as { version: 3 };
    const uploaded = await call(t.s.web.url, 'PUT', `${envBase(t.env)}/releases/${release}/source_maps`, {
      key: t.env.secretKey,
      body: { file: `${siteUrl}/app.min.js`, source_map: map },
    });
    expect(uploaded.status).toBe(201);

    const { event, answers } = await clickAndRead('/checkout?session_token=tok_live_8f7e6d5c4b3a2910');
    // The event, and the session the SDK opens at load (dropped): each answered to the page's origin.
    expect(answers.length).toBeGreaterThanOrEqual(2);
    for (const a of answers) expect(a).toBe(`200 ${siteUrl}`);

    expect(event.exception_type).toBe('TypeError');
    expect(event.message).toMatch(/rate/);
    expect(event.stack_frames.at(-1)).toMatchObject({
      function: 'applyDiscount',
      file: expect.stringMatching(/test\/errors\/sentry\/fixtures\/browser-app\.js$/),
      line: 9,
      generated: { file: `${siteUrl}/app.min.js` },
    });
    expect(event.stack_frames.some((f) => f.function === 'checkout')).toBe(true);
    expect(event.sentry.platform).toBe('javascript');
    expect(event.sentry.request?.url).toBe(`${siteUrl}/checkout?session_token=[Filtered]`);
    expect(JSON.stringify(event)).not.toContain('tok_live_8f7e6d5c4b3a2910');
  });

  it('maps a bundle by the debug ids sentry-cli injected, whatever its URL and release', async () => {
    const map = JSON.parse(readFileSync(join(dir, 'static', 'bundle.js.map'), 'utf8')) as {
      version: 3;
      debugId?: string;
    };
    expect(map.debugId).toMatch(/^[0-9a-f-]{36}$/);
    // Uploaded under another release and another file name than the page serves.
    const uploaded = await call(t.s.web.url, 'PUT', `${envBase(t.env)}/releases/build-7/source_maps`, {
      key: t.env.secretKey,
      body: { file: 'https://cdn.example/unrelated.min.js', source_map: map },
    });
    expect(uploaded.status).toBe(201);

    const { event } = await clickAndRead('/v2');
    expect(event.release).toBe('web@2.0.0');
    expect(event.sentry.debug_ids).toEqual({ [`${siteUrl}/static/bundle.js`]: map.debugId });
    expect(event.stack_frames.at(-1)).toMatchObject({
      function: 'applyDiscount',
      file: expect.stringMatching(/browser-app\.js$/),
      line: 9,
      generated: { file: `${siteUrl}/static/bundle.js` },
    });
  });
});

// What Sentry SDKs send is kept and read back through the /v1 API under Sentry's names: frames'
// code context (`pre_context`, `context_line`, `post_context`), `contexts`, `level`, `server_name`,
// `request` and `user`, as sent but for scrubbing. The real @sentry/node, in its own process,
// reports an error thrown in a real file (its ContextLines integration reads the lines around each
// frame, one of which holds a database password); a browser SDK's event from sentry-javascript's
// own fixtures is posted as an envelope, one of its frames mapped by an uploaded source map (the
// map's context replaces the bundle's) and one left as sent.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encode } from '@jridgewell/sourcemap-codec';
import { afterAll, describe, expect, it } from 'vitest';
import type { StackFrame } from '../../../src/contract/errors.ts';
import { dsnFor } from '../../../src/domain/errors/sentry/client-keys.ts';
import { call } from '../../support/harness.ts';
import { envBase, readStored, useStack } from '../support.ts';
import { browserErrorEvent, bundleFrame, pageFrame } from './fixtures/browser-event.ts';

const t = useStack();
const dir = mkdtempSync(join(tmpdir(), 'cairn-sdk-context-'));

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
});

type Obj = Record<string, unknown>;
interface StoredEvent {
  stack_frames: StackFrame[];
  level?: string;
  platform?: string;
  environment?: string;
  server_name?: string;
  user?: Obj;
  request?: Obj & { headers?: Record<string, string> };
  contexts?: Obj;
  sentry?: Obj;
}
interface SentFrame {
  filename?: string;
  function?: string;
  in_app?: boolean;
  pre_context?: string[];
  context_line?: string;
  post_context?: string[];
}

const read = async (id: string) => (await readStored<StoredEvent>(t.s.web, t.env, id)).body;
const context = (f: SentFrame | StackFrame) => ({
  pre_context: f.pre_context,
  context_line: f.context_line,
  post_context: f.post_context,
});

describe('@sentry/node', () => {
  it('keeps the code context ContextLines sends, scrubbed, and the contexts, user, request, level and server name', async () => {
    const sentFile = join(dir, 'sent.json');
    const child = spawn(process.execPath, ['test/errors/sentry/fixtures/node-context-app.mjs'], {
      env: {
        ...process.env,
        SENTRY_DSN: dsnFor(t.s.web.url, t.env.clientKey.publicKey, t.env.clientKey.projectNumber),
        SENT_EVENTS: sentFile,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code, out).toBe(0);
    const [sent] = JSON.parse(readFileSync(sentFile, 'utf8')) as (Obj & {
      event_id: string;
      exception: { values: { stacktrace: { frames: SentFrame[] } }[] };
      request: { headers: Record<string, string> };
    })[];
    const stored = await read(sent!.event_id);

    // Every frame's context comes back as the SDK sent it; the password in the line above the
    // throw is scrubbed, and nowhere in the event.
    const sentFrames = sent!.exception.values[0]!.stacktrace.frames;
    expect(stored.stack_frames).toHaveLength(sentFrames.length);
    const thrower = stored.stack_frames.at(-1)!;
    expect(thrower).toMatchObject({ function: 'loadOrder', line: 25, in_app: true });
    expect(thrower.context_line).toBe('  throw new Error(`order ${id} was not found`);');
    expect(thrower.pre_context).toContain("  const db = 'postgres://orders:[Filtered]@db.internal:5432/orders';");
    expect(JSON.stringify(stored)).not.toContain('hunter2');
    const unscrub = (lines: string[] | undefined) => lines?.map((l) => l.replace('[Filtered]', 'hunter2'));
    for (const [i, f] of sentFrames.entries()) {
      const kept = stored.stack_frames[i]!;
      expect({ ...context(kept), pre_context: unscrub(kept.pre_context) }, f.filename).toEqual(context(f));
    }
    expect(sentFrames.filter((f) => f.in_app && f.context_line !== undefined)).toHaveLength(2);

    // Sentry's own names, as sent: contexts whole (os, runtime, device, app, culture, trace and the
    // app's own), level, server name; the user's address and the host header's are scrubbed.
    expect(stored.contexts).toEqual(sent!.contexts);
    expect(stored.contexts).toMatchObject({ order: { id: 42, plan: 'pro' }, runtime: { name: 'node' } });
    expect(stored).toMatchObject({
      level: 'warning',
      server_name: 'orders-web-3',
      platform: 'node',
      environment: 'ci',
    });
    expect(stored.user).toEqual({ ...(sent!.user as Obj), ip_address: '[Filtered]' });
    const host = sent!.request.headers.host!;
    expect(stored.request).toEqual({
      ...sent!.request,
      headers: { ...sent!.request.headers, host: host.replace('127.0.0.1', '[Filtered]') },
    });
    // The `sentry` object still holds them, for clients that read it there.
    expect(stored.sentry).toMatchObject({ level: 'warning', server_name: 'orders-web-3', user: stored.user });
  });
});

describe('a browser SDK event from sentry-javascript fixtures', () => {
  /** A hand-made map of the one-line bundle: all of it is `applyCoupon` at src/checkout.ts:4:3. */
  const checkoutMap = {
    version: 3,
    file: 'app.min.js',
    sources: ['src/checkout.ts'],
    sourcesContent: [
      '// checkout\nexport function applyCoupon(code: string) {\n  // the coupon must exist\n  throw new CheckoutError(code);\n}\n',
    ],
    names: ['applyCoupon'],
    mappings: encode([[[0, 0, 3, 2, 0]]]),
  };

  it('answers its contexts, user, request and level, the page frame as sent and the mapped frame with its map', async () => {
    const put = await call(t.s.web.url, 'PUT', `${envBase(t.env)}/releases/frontend@22.11.0/source_maps`, {
      key: t.env.secretKey,
      body: { file: bundleFrame.filename, source_map: checkoutMap },
    });
    expect(put.status).toBe(201);
    const id = crypto.randomUUID().replace(/-/g, '');
    const event = browserErrorEvent({ event_id: id });
    const body = [JSON.stringify({ event_id: id }), JSON.stringify({ type: 'event' }), JSON.stringify(event)].join(
      '\n',
    );
    const path = `/api/${t.env.clientKey.projectNumber}/envelope/?sentry_key=${t.env.clientKey.publicKey}&sentry_version=7`;
    const res = await fetch(`${t.s.web.url}${path}`, { method: 'POST', body });
    expect(res.status).toBe(200);
    const stored = await read(id);

    const [outer, page, bundle] = stored.stack_frames;
    expect(context(outer!)).toEqual({ pre_context: undefined, context_line: undefined, post_context: undefined });
    // Not mapped (no map for the page): the SDK's context, as sent.
    expect(page).toMatchObject({ file: pageFrame.filename, unmapped_reason: 'no_map_for_file' });
    expect(context(page!)).toEqual(context(pageFrame));
    // Mapped: the original source's lines replace the bundle's, which stay nowhere in the frame.
    expect(bundle).toMatchObject({ file: 'src/checkout.ts', line: 4, function: 'applyCoupon' });
    expect(context(bundle!)).toEqual({
      pre_context: ['// checkout', 'export function applyCoupon(code: string) {', '  // the coupon must exist'],
      context_line: '  throw new CheckoutError(code);',
      post_context: ['}', ''],
    });
    expect(JSON.stringify(bundle)).not.toContain(bundleFrame.context_line);

    const sent = event as Obj & { user: Obj; request: { headers: Record<string, string> } };
    expect(stored.contexts).toEqual(sent.contexts);
    expect(stored.level).toBe('error');
    expect(stored.platform).toBe('javascript');
    // The e-mail and the address go; the rest of the user stays. The User-Agent's Chrome version
    // reads as an IPv4 address to the default rules.
    expect(stored.user).toEqual({ ...sent.user, ip_address: '[Filtered]', email: '[Filtered]' });
    expect(stored.request).toEqual({
      url: 'https://example.org',
      headers: { 'User-Agent': sent.request.headers['User-Agent']!.replace('107.0.0.0', '[Filtered]') },
    });
  });
});

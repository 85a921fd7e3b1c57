// A Sentry envelope costs a web process what its limits allow, whatever it holds: a real web
// process (its own OS process, with the heap a 512 MB dyno leaves it) is sent 27 KiB of gzip that
// decode to 1,000,000 tiny items. Without a key, or with an unknown key in the envelope header,
// it answers 401 after the first line; with a valid key it answers 413 once the item cap is
// passed. Its resident memory barely moves (it used to grow by 300 MiB per such request, and die
// of "heap out of memory" with a 256 MiB heap), it still answers afterwards, and an envelope of the
// items an SDK really sends is still taken.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { createHarness, createTestEnv, sqlNumber, type Harness } from '../support/harness.ts';
import { spawnWeb, type WebProcess } from '../support/web-process.ts';

let h: Harness;
let web: WebProcess;
let env: CreatedEnv;

beforeAll(async () => {
  h = await createHarness();
  // The heap a 512 MB dyno leaves a web process: one such request used to exhaust it.
  web = await spawnWeb(h.config.DATABASE_URL, { NODE_OPTIONS: '--max-old-space-size=256' });
  env = await createTestEnv(h.db);
});
afterAll(async () => {
  await web?.stop();
  await h?.close();
});

const MiB = 1024 * 1024;
const n = () => env.clientKey.projectNumber;
const unknownKey = 'f'.repeat(32);

/** An envelope header line, then `count` lines `{"type":"x"}` (items and their one-line payloads). */
function flood(header: Record<string, unknown>, count: number): Buffer {
  const line = Buffer.from('{"type":"x"}\n');
  const body = Buffer.allocUnsafe(line.length * count);
  for (let i = 0; i < count; i++) line.copy(body, i * line.length);
  return gzipSync(Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), body]));
}

async function post(path: string, body: Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(`${web.url}${path}`, {
    method: 'POST',
    headers: { 'content-encoding': 'gzip', ...headers },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

/** Events of the environment queued for the worker. */
const queued = () =>
  sqlNumber(
    h.db,
    `select count(*) from pgboss.job j, jsonb_array_elements(j.data->'events') e
      where j.name = 'errors.ingest' and e->>'env_id' = ?`,
    [env.env.id],
  );

/** An envelope as a Node SDK sends it: an event, an attachment of it, a session and a client report. */
function sdkEnvelope(eventId: string): Buffer {
  const event = JSON.stringify({
    event_id: eventId,
    timestamp: Date.now() / 1000,
    platform: 'node',
    exception: { values: [{ type: 'Error', value: 'boom', stacktrace: { frames: [{ filename: '/srv/app.js' }] } }] },
    contexts: { trace: { trace_id: 'a'.repeat(32), span_id: 'b'.repeat(16) } },
  });
  const attachment = 'a log file\nwith lines\n';
  const lines = [
    JSON.stringify({ event_id: eventId, sent_at: new Date().toISOString(), sdk: { name: 'sentry.javascript.node' } }),
    JSON.stringify({ type: 'event', length: Buffer.byteLength(event) }),
    event,
    JSON.stringify({ type: 'attachment', length: attachment.length, filename: 'log.txt' }),
    attachment,
    JSON.stringify({ type: 'session' }),
    JSON.stringify({ sid: crypto.randomUUID(), status: 'ok', init: true }),
    JSON.stringify({ type: 'client_report' }),
    JSON.stringify({ timestamp: Date.now() / 1000, discarded_events: [] }),
  ];
  return gzipSync(Buffer.from(lines.join('\n')));
}

describe('an envelope of a million tiny items', () => {
  it('answers 401 after its first line without a key, or with an unknown key in its header, and the memory stays', async () => {
    const before = web.rss();
    const bodies = [
      flood({}, 1_000_000),
      flood({ dsn: `http://${unknownKey}@127.0.0.1/${n()}` }, 1_000_000),
      flood({}, 1_000_000),
    ];
    // 27 KiB of gzip each.
    for (const body of bodies) expect(body.length).toBeLessThan(32 * 1024);
    for (const body of bodies) {
      const res = await post(`/api/${n()}/envelope/`, body);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'unauthorized' });
    }
    // Refused at its first line while the rest is still on its way (15 MiB, not encoded, without a
    // Content-Length): the rest is dropped as it comes, and the answer arrives, not a reset.
    const streamed = await fetch(`${web.url}/api/${n()}/envelope/`, {
      method: 'POST',
      body: new Blob([
        `{"dsn":"http://${unknownKey}@127.0.0.1/${n()}"}\n`,
        '{"type":"x"}\n'.repeat(1_200_000),
      ]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(401);
    // With X-Sentry-Auth naming an unknown key, nothing of the body is read.
    const header = await post(`/api/${n()}/envelope/`, bodies[0]!, {
      'x-sentry-auth': `Sentry sentry_version=7, sentry_key=${unknownKey}`,
    });
    expect(header.status).toBe(401);
    // It used to grow by 300 MiB per request and keep it; one chunk of the body is what it reads now.
    expect(web.rss() - before).toBeLessThan(64 * MiB);
    expect((await fetch(`${web.url}/healthz`)).status).toBe(200);
  });

  it('answers 413 past the item cap with a valid key, in the query or the envelope header, and an SDK envelope is still taken', async () => {
    const before = web.rss();
    const inQuery = await post(`/api/${n()}/envelope/?sentry_key=${env.clientKey.publicKey}`, flood({}, 1_000_000));
    expect(inQuery.status).toBe(413);
    expect(inQuery.body).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/1000 items/) });
    const dsn = `http://${env.clientKey.publicKey}@127.0.0.1/${n()}`;
    const inHeader = await post(`/api/${n()}/envelope/`, flood({ dsn }, 3_000_000));
    expect(inHeader.status).toBe(413);
    expect(web.rss() - before).toBeLessThan(64 * MiB);
    // At the cap itself (1000 items, here 500 headers and their payloads), the envelope is taken.
    const atCap = await post(`/api/${n()}/envelope/?sentry_key=${env.clientKey.publicKey}`, flood({}, 2000));
    expect(atCap).toEqual({ status: 200, body: { id: null } });
    expect(await queued()).toBe(0);
    const eventId = crypto.randomUUID().replace(/-/g, '');
    const sdk = await post(`/api/${n()}/envelope/?sentry_key=${env.clientKey.publicKey}`, sdkEnvelope(eventId));
    expect(sdk).toEqual({ status: 200, body: { id: eventId } });
    expect(await queued()).toBe(1);
    expect(web.output()).not.toMatch(/heap out of memory/);
  });
});

// The group page's events, user, frames and tags, and the event pages, over real Sentry envelopes
// processed by the real worker: the events page 20 at a time newest first under a signed position;
// an event's page links its group's newer and older events and is not found from another
// environment or under another group; the tag summary's query keeps its bounds and environment;
// and in Chromium the page folds library frames, marks the frame's line, says "Not mapped" once,
// walks events by Older and Newer, and passes axe at 1100 and 390 px without a sideways scroll (its
// older-events page too); the tag summary gives each value's count and share.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsoleSession } from '../../src/domain/console/sessions.ts';
import { tagSummary } from '../../src/domain/errors/groups/tag-queries.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { esc } from '../../src/html/html.ts';
import { queues } from '../../src/queues.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { envBase, groupIdOf, readStored } from '../errors/support.ts';
import { call, createTestEnv, useWeb } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { paymentEvent, sendEvent, type SentEvent } from './group-support.ts';
import { audit, launchBrowser, newPage, shots, signIn } from './support.ts';

const stack = useWeb({ atBaseUrl: true });
let worker: WorkerHandle<typeof queues>;
let envA: CreatedEnv;
let envB: CreatedEnv;
let browser: Browser;
let cookieA: string;
let cookieB: string;
/** The group of the 23 events, their uids newest first (as the API lists them) and stored bodies by uid. */
let group: string;
let uids: string[];
const stored = new Map<string, { user?: Record<string, unknown>; stack_frames: { context_line?: string }[] }>();
/** An event of another group of A, and one of B. */
let otherGroup: { group: string; uid: string };
let foreign: { group: string; uid: string };

const count = 23;
const browserOf = (i: number) => (i % 3 === 0 ? 'Firefox' : 'Chrome');
const sent: SentEvent[] = Array.from({ length: count }, (_, i) =>
  paymentEvent(i, {
    user:
      i === count - 1
        ? { id: '42', email: 'ada@example.com', username: 'ada', ip_address: '203.0.113.9' }
        : i % 2 === 0
          ? { id: `u${i}`, email: `user${i}@example.com` }
          : { ip_address: `203.0.113.${i}` },
    tags: { browser: browserOf(i), plan: 'pro' },
  }),
);

async function storeOne(env: CreatedEnv, e: SentEvent): Promise<{ group: string; uid: string }> {
  await sendEvent(stack.web, env, e);
  const body = (await readStored<{ name: string; uid: string }>(stack.web, env, e.event_id)).body;
  return { group: groupIdOf(body.name), uid: body.uid };
}

beforeAll(async () => {
  worker = await startWorker(stack.h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  [envA, envB] = [await createTestEnv(stack.h.db), await createTestEnv(stack.h.db)];
  await Promise.all(sent.map((e) => sendEvent(stack.web, envA, e)));
  const events = await Promise.all(sent.map((e) => readStored(stack.web, envA, e.event_id, 60_000)));
  group = groupIdOf(events[0]!.body.name);
  expect(new Set(events.map((e) => groupIdOf(e.body.name)))).toEqual(new Set([group]));
  for (const e of events) stored.set(e.body.uid as string, e.body as never);
  const list = await call<{ error_events: { uid: string }[] }>(
    stack.web.url,
    'GET',
    `${envBase(envA)}/error_groups/${group}/error_events?page_size=100`,
    { key: envA.secretKey },
  );
  uids = list.body.error_events.map((e) => e.uid);
  expect(uids).toHaveLength(count);
  otherGroup = await storeOne(envA, paymentEvent(40, { type: 'RefundError' }));
  foreign = await storeOne(envB, paymentEvent(0));
  cookieA = `cairn_console_session=${await openConsoleSession(stack.h.db, envA.env.id, null, 'link')}`;
  cookieB = `cairn_console_session=${await openConsoleSession(stack.h.db, envB.env.id, null, 'link')}`;
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await worker?.stop();
});

async function get(path: string, cookie = cookieA): Promise<{ status: number; html: string }> {
  const res = await fetch(`${stack.web.url}${path}`, { headers: { cookie }, redirect: 'manual' });
  return { status: res.status, html: await res.text() };
}

const eventLinks = (html: string) =>
  [...html.matchAll(/href="\/console\/errors\/eg_[0-9a-z]+\/events\/(err_[0-9a-z]+)"/g)].map((m) => m[1]!);
const eventsSection = (html: string) => html.slice(html.indexOf('<h2 id="events">'));

describe('the group page and its events over HTTP', () => {
  it("pages the group's events newest first, 20 a page, under a signed position", async () => {
    const first = await get(`/console/errors/${group}`);
    expect(first.status).toBe(200);
    expect(eventLinks(eventsSection(first.html))).toEqual(uids.slice(0, 20));
    // The latest event links to its own page.
    expect(first.html).toContain(`href="/console/errors/${group}/events/${uids[0]}">Open this event</a>`);
    expect(first.html).not.toContain('Newest events');
    const older = /href="(\/console\/errors\/[^"?]+\?after=[^"#]+)#events">Older events</.exec(first.html)![1]!;

    const second = await get(older);
    expect(second.status).toBe(200);
    expect(eventLinks(eventsSection(second.html))).toEqual(uids.slice(20));
    expect(second.html).toContain(`<a href="/console/errors/${group}#events">Newest events</a>`);
    expect(second.html).not.toContain('Older events');
    // The latest event is still the group's latest on a later page.
    expect(second.html).toContain(`/events/${uids[0]}">Open this event</a>`);

    const tampered = await get(older.slice(0, -2) + (older.endsWith('A') ? 'BB' : 'AA'));
    expect(tampered.status).toBe(400);
    expect(tampered.html).toContain('This page link is not valid');
  });

  it('shows one event with its user as stored (scrubbed), and links to the newer and older events of its group', async () => {
    for (const k of [0, 1, 12, count - 1]) {
      const page = await get(`/console/errors/${group}/events/${uids[k]}`);
      expect(page.status).toBe(200);
      expect(page.html).toContain(`<a href="/console/errors/${group}">← `);
      expect(page.html).toContain(`<h2>Event <code>${uids[k]}</code></h2>`);
      const newer = k > 0 ? `href="/console/errors/${group}/events/${uids[k - 1]}" rel="prev">← Newer` : 'newest event';
      const older = k < count - 1 ? `events/${uids[k + 1]}" rel="next">Older →` : 'This is the oldest event';
      expect(page.html).toContain(newer);
      expect(page.html).toContain(older);
      const user = stored.get(uids[k]!)!.user!;
      const shown = ['id', 'email', 'username'].filter((f) => user[f] !== undefined);
      for (const f of shown) expect(page.html).toContain(`<dd>${esc(String(user[f]))}</dd>`);
      // The IP address only when it is all the event says of its user.
      expect(page.html.includes('<dt>IP address</dt>')).toBe(shown.length === 0);
    }
  });

  it('does not find an event of another environment or of another group, nor a group of another environment', async () => {
    const refused = [
      `/console/errors/${group}/events/${foreign.uid}`,
      `/console/errors/${foreign.group}/events/${foreign.uid}`,
      `/console/errors/${foreign.group}`,
      `/console/errors/${group}/events/${otherGroup.uid}`,
      `/console/errors/${group}/events/not-an-event`,
    ];
    for (const path of refused) expect((await get(path)).status, path).toBe(404);
    // The same pages answer in their own environment.
    expect((await get(`/console/errors/${foreign.group}/events/${foreign.uid}`, cookieB)).status).toBe(200);
    expect((await get(`/console/errors/${otherGroup.group}/events/${otherGroup.uid}`)).status).toBe(200);
  });

  it("reads a group's tag summary most events first, bounded per key and in number of keys, within its environment", async () => {
    const row = (key: string, value: string, n: number, envId = envA.env.id) => ({
      group_id: otherGroup.group,
      env_id: envId,
      key: `probe.${key}`,
      value,
      count: n,
      last_seen_time: new Date(),
    });
    await stack.h
      .db('error_group_tags')
      .insert([
        ...[7, 6, 5, 4, 3, 2, 1].map((n) => row('b', `v${8 - n}`, 1000 + n)),
        row('a', 'x', 9000),
        row('c', 'tie-2', 1000),
        row('c', 'tie-1', 1000),
        row('leak', 'from B', 99_999, envB.env.id),
      ]);
    const probes = (await tagSummary(stack.h.db, envA.env.id, otherGroup.group, { maxKeys: 30, perKey: 5 })).filter(
      (t) => t.key.startsWith('probe.'),
    );
    expect(probes).toEqual([
      { key: 'probe.a', total: 9000, values: [{ value: 'x', count: 9000 }] },
      {
        key: 'probe.b',
        total: 7028,
        values: [1007, 1006, 1005, 1004, 1003].map((n) => ({ value: `v${1008 - n}`, count: n })),
      },
      {
        key: 'probe.c',
        total: 2000,
        values: [
          { value: 'tie-1', count: 1000 },
          { value: 'tie-2', count: 1000 },
        ],
      },
    ]);
    const top = await tagSummary(stack.h.db, envA.env.id, otherGroup.group, { maxKeys: 1, perKey: 5 });
    expect(top.map((t) => t.key)).toEqual(['probe.a']);
  });
});

/** No sideways scroll: the page is no wider than the viewport. */
const overflow = (page: Page) =>
  page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth') as Promise<number>;

async function auditBothWidths(page: Page, name: string): Promise<void> {
  await page.setViewportSize({ width: 1100, height: 800 });
  expect(await audit(page)).toEqual([]);
  await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await audit(page)).toEqual([]);
  expect(await overflow(page)).toBeLessThanOrEqual(0);
  await page.screenshot({ path: `${shots}/${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1100, height: 800 });
}

describe('the group page and its events in Chromium', () => {
  it('shows the latest user, folds library frames, marks the frame line, and walks events by Older and Newer', async () => {
    const page = await newPage(browser);
    await signIn(page, stack.web.url, envA.secretKey);
    await page.goto(`${stack.web.url}/console/errors/${group}`);
    const latest = stored.get(uids[0]!)!;
    const facts = await page.locator('.facts').first().textContent();
    for (const f of ['id', 'email', 'username']) expect(facts).toContain(String(latest.user![f]));
    expect(facts).not.toContain('IP address');

    // The application's frame, its line marked and numbered; the two express frames behind one control.
    const stackList = page.locator('ol.frames').first();
    await expect(stackList.locator('mark.hit').textContent()).resolves.toBe(
      `12${latest.stack_frames.at(-1)!.context_line}\n`,
    );
    const fold = stackList.locator('.fold summary');
    await expect(fold.textContent()).resolves.toBe('2 frames not in app');
    await expect(page.getByText('Layer.handle').isVisible()).resolves.toBe(false);
    await fold.click();
    await expect(page.getByText('Layer.handle').isVisible()).resolves.toBe(true);
    // Why the frames were not mapped, once for the stack.
    await expect(page.locator('.unmapped').textContent()).resolves.toBe(
      'Not mapped: the event names no release, so no source map applies.',
    );
    expect((await page.locator('main').textContent())!.match(/not mapped/gi)).toHaveLength(1);
    await auditBothWidths(page, 'group-events');

    // The events' older page by its link: the last 3 events, and axe at both widths there too.
    const pager = page.getByRole('navigation', { name: 'Pages of events' });
    await pager.getByRole('link', { name: 'Older events' }).click();
    await page.waitForURL((u) => u.searchParams.has('after'));
    await expect(page.locator('#events + table a').count()).resolves.toBe(count - 20);
    await auditBothWidths(page, 'group-older-events');
    await pager.getByRole('link', { name: 'Newest events' }).click();
    await page.waitForURL((u) => !u.searchParams.has('after'));

    // From the Events list to the newest event, then Older and Newer.
    await page.locator('#events + table a').first().click();
    expect(new URL(page.url()).pathname).toBe(`/console/errors/${group}/events/${uids[0]}`);
    const nav = page.getByRole('navigation', { name: 'Events of this group' });
    await expect(nav.textContent()).resolves.toContain('This is the newest event');
    await auditBothWidths(page, 'event');
    await nav.getByRole('link', { name: 'Older →' }).click();
    expect(new URL(page.url()).pathname).toBe(`/console/errors/${group}/events/${uids[1]}`);
    await nav.getByRole('link', { name: '← Newer' }).click();
    expect(new URL(page.url()).pathname).toBe(`/console/errors/${group}/events/${uids[0]}`);
    await page.getByRole('link', { name: /^← PaymentError/ }).click();
    expect(new URL(page.url()).pathname).toBe(`/console/errors/${group}`);
    await page.context().close();
  });
});

// Needs the worker to keep error_group_tags from the events it stores (the facets change): it
// waits for the summary of the events above to reach the page.
describe('the tag summary from real captures', () => {
  it("summarises the tags of the group's events: each key's top values, their counts and share", async () => {
    const firefox = sent.filter((_, i) => browserOf(i) === 'Firefox').length;
    expect([firefox, count - firefox]).toEqual([8, 15]);
    const share = (n: number) => `${Math.round((n / count) * 100)}%`;
    const facet = (html: string) => /<th scope="row"><code>browser<\/code>[\s\S]*?<\/tr>/.exec(html)?.[0];
    const row = await eventually(async () => facet((await get(`/console/errors/${group}`)).html), {
      timeoutMs: 30_000,
      what: 'the browser tag in the summary',
    });
    expect(row).toContain(`${count} events`);
    expect(row).toMatch(
      new RegExp(
        `Chrome</span> <span class="muted">15 events · ${share(count - firefox)}.*Firefox</span> <span class="muted">8 events · ${share(firefox)}`,
      ),
    );
    expect(row).not.toContain('other values');
    const page = await newPage(browser);
    await signIn(page, stack.web.url, envA.secretKey);
    await page.goto(`${stack.web.url}/console/errors/${group}`);
    await expect(page.getByRole('rowheader', { name: /^plan/ }).isVisible()).resolves.toBe(true);
    // As read: each value, then its count of events and its share, the count in words.
    const browserRow = page.getByRole('row', { name: /^browser/ });
    await expect(browserRow.getByRole('listitem').allInnerTexts()).resolves.toEqual([
      `Chrome 15 events · ${share(15)}`,
      `Firefox 8 events · ${share(8)}`,
    ]);
    await expect(page.getByRole('row', { name: /^plan/ }).getByRole('listitem').allInnerTexts()).resolves.toEqual([
      `pro ${count} events · 100%`,
    ]);
    await auditBothWidths(page, 'group-tags');
    await page.context().close();
  });
});

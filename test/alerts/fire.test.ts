// Alert rules fire once for their cause and not otherwise, through the real capture, the real
// worker (the store's transaction evaluates them), a real SMTP server and a real HTTP receiver on
// 127.0.0.1: a new group, a regression (once per snooze), a frequency threshold (at N within M,
// not below), a rule's search; the messages carry the scrubbed group's facts, escaped in HTML.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneAlerts } from '../../src/domain/alerts/send/prune.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import type { WorkerHandle } from '../../src/worker.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { capture, envBase, groupIdOf, readStored, sampleEvent } from '../errors/support.ts';
import { startReceiver, type Receiver } from '../webhooks/support.ts';
import {
  actionsOf,
  firingsOf,
  insertRule,
  startAlertWorker,
  startMailServer,
  type AlertMailServer,
} from './support.ts';

let mail: AlertMailServer;
let slack: Receiver;
let h: Harness;
let web: WebHandle;
let worker: WorkerHandle<Record<string, never>> | undefined;

beforeAll(async () => {
  mail = await startMailServer();
  slack = await startReceiver(() => 200);
});
const stack = useWeb({}, () => ({ SMTP_URL: mail.url, CAIRN_BASE_URL: 'https://cairn.example.com' }));
beforeAll(async () => {
  ({ h, web } = stack);
  worker = (await startAlertWorker(h)) as unknown as WorkerHandle<Record<string, never>>;
});
afterAll(async () => {
  await worker?.stop();
  await slack?.close();
  await mail?.close();
});

/** Captures an event now and waits until the worker stored it (its rules were evaluated with it); answers its group. */
async function stored(env: CreatedEnv, overrides: Record<string, unknown> = {}): Promise<string> {
  const uid = await capture(web, env, sampleEvent({ event_time: new Date().toISOString(), ...overrides }));
  return groupIdOf((await readStored(web, env, uid)).body.name);
}

async function resolve(env: CreatedEnv, groupId: string): Promise<void> {
  const path = `${envBase(env)}/error_groups/${groupId}`;
  const g = await call<{ etag: string }>(web.url, 'GET', path, { key: env.secretKey });
  const r = await call(web.url, 'POST', `${path}:resolve`, { key: env.secretKey, body: { etag: g.body.etag } });
  expect(r.status).toBe(200);
}

const sentAll = (firingId: string) =>
  eventually(async () => {
    const rows = await actionsOf(h, firingId);
    return rows.length > 0 && rows.every((a) => a.state === 'sent') ? rows : undefined;
  });

describe('new_group', () => {
  it('mails once for a new group, with its scrubbed facts, the HTML escaped', async () => {
    const env = await createTestEnv(h.db);
    const to = `oncall-${env.env.id}@example.com`;
    const rule = await insertRule(h, env, { when: 'new_group', email: [to], name: 'New errors' });
    const message = 'charge failed for <b>card</b> 4111111111111111';
    const group = await stored(env, { message, release: 'shop@1.2.3' });
    await stored(env, { message, release: 'shop@1.2.3' });

    const [firing, ...more] = await firingsOf(h, rule);
    expect(more).toEqual([]);
    expect(firing).toMatchObject({ group_id: group, reason: 'new_group' });
    expect(firing!.facts).toMatchObject({
      environment: env.env.name,
      count: 1,
      release: 'shop@1.2.3',
      link: `https://cairn.example.com/console/errors/${group}`,
    });
    const m = await mail.waitFor((x) => x.to.includes(to));
    expect(m.subject).toBe(`[Cairn] New error in ${env.env.name}: TypeError: charge failed for <b>card</b> [Filtered]`);
    expect(m.text).toContain('TypeError: charge failed for <b>card</b> [Filtered]');
    expect(m.text).toContain(`Environment: ${env.env.name}`);
    expect(m.text).toContain('Release: shop@1.2.3');
    expect(m.text).toContain(`Open it in the console: https://cairn.example.com/console/errors/${group}`);
    expect(m.html).toContain('charge failed for &#60;b&#62;card&#60;/b&#62; [Filtered]');
    expect(m.html).not.toContain('<b>card');
    expect(`${m.subject}${m.text}${m.html}`).not.toContain('4111111111111111');
    expect(await sentAll(firing!.id)).toMatchObject([{ type: 'email', state: 'sent', attempt_count: 1, error: null }]);
    // The second event stored above made no second firing, hence no second mail.
    expect(mail.inbox.filter((x) => x.to.includes(to))).toHaveLength(1);
  });

  it('fires only for groups its search covers', async () => {
    const env = await createTestEnv(h.db);
    const rule = await insertRule(h, env, { when: 'new_group', q: 'service:api', slack: slack.url });
    const other = await stored(env, { service_name: 'billing', exception_type: 'RangeError' });
    const covered = await stored(env, { service_name: 'api' });
    const firings = await firingsOf(h, rule);
    expect(firings.map((f) => f.group_id)).toEqual([covered]);
    expect(firings.map((f) => f.group_id)).not.toContain(other);
    await sentAll(firings[0]!.id);
  });
});

describe('regression', () => {
  it('fires when a resolved group reopens, once per snooze', async () => {
    const env = await createTestEnv(h.db);
    const rule = await insertRule(h, env, { when: 'regression', slack: slack.url, snooze_minutes: 30 });
    const group = await stored(env, { exception_type: 'RegressionError' });
    expect(await firingsOf(h, rule)).toEqual([]);

    await resolve(env, group);
    await stored(env, { exception_type: 'RegressionError' });
    const [first] = await firingsOf(h, rule);
    expect(first).toMatchObject({ group_id: group, reason: 'regression' });
    await sentAll(first!.id);
    const body = JSON.parse(slack.received.find((r) => r.body.includes(group))!.body) as { text: string };
    expect(body.text).toContain(`*Regression in ${env.env.name}*`);
    expect(body.text).toContain(`https://cairn.example.com/console/errors/${group}`);

    // Reopened again within the snooze: no second firing.
    await resolve(env, group);
    await stored(env, { exception_type: 'RegressionError' });
    expect(await firingsOf(h, rule)).toHaveLength(1);

    // Once the snooze is over, the next regression fires again.
    await h
      .db('alert_snoozes')
      .where({ rule_id: rule })
      .update({ until: h.db.raw("now() - interval '1 second'") });
    await resolve(env, group);
    await stored(env, { exception_type: 'RegressionError' });
    expect(await firingsOf(h, rule)).toHaveLength(2);
  });
});

describe('frequency', () => {
  it('fires at N events of one group within M minutes, and not below', async () => {
    const env = await createTestEnv(h.db);
    const rule = await insertRule(h, env, {
      when: 'frequency',
      threshold_events: 3,
      threshold_window_minutes: 10,
      slack: slack.url,
    });
    const busy = await stored(env, { exception_type: 'BusyError' });
    await stored(env, { exception_type: 'BusyError' });
    const quiet = await stored(env, { exception_type: 'QuietError' });
    await stored(env, { exception_type: 'QuietError' });
    expect(await firingsOf(h, rule)).toEqual([]);

    await stored(env, { exception_type: 'BusyError' });
    const firings = await firingsOf(h, rule);
    expect(firings).toHaveLength(1);
    expect(firings[0]).toMatchObject({ group_id: busy, reason: 'frequency' });
    expect(firings[0]!.facts).toMatchObject({ count: 3, window_minutes: 10 });
    expect(firings.map((f) => f.group_id)).not.toContain(quiet);
    await sentAll(firings[0]!.id);
    const body = JSON.parse(slack.received.find((r) => r.body.includes(busy))!.body) as { text: string };
    expect(body.text).toContain('Events in the last 10 min: 3');
    expect(await h.db('alert_group_minutes').where({ group_id: busy }).sum({ n: 'count' }).first()).toEqual({
      n: '3',
    });
  });

  it('a second event within the snooze does not notify again', async () => {
    const env = await createTestEnv(h.db);
    const to = `snooze-${env.env.id}@example.com`;
    const rule = await insertRule(h, env, {
      when: 'frequency',
      threshold_events: 1,
      threshold_window_minutes: 5,
      email: [to],
    });
    await stored(env, { exception_type: 'SnoozeError' });
    await stored(env, { exception_type: 'SnoozeError' });
    const firings = await firingsOf(h, rule);
    expect(firings).toHaveLength(1);
    await sentAll(firings[0]!.id);
    expect(mail.inbox.filter((m) => m.to.includes(to))).toHaveLength(1);
  });

  it('keeps no minutes for an environment without a frequency rule', async () => {
    const env = await createTestEnv(h.db);
    await insertRule(h, env, { when: 'new_group', email: ['x@example.com'], q: 'nothing-matches-this' });
    const group = await stored(env, { exception_type: 'PlainError' });
    expect(await h.db('alert_group_minutes').where({ group_id: group })).toEqual([]);
    expect(await h.db('alert_firings').where({ group_id: group })).toEqual([]);
  });
});

describe('prune', () => {
  it('keeps what is recent, then drops firings past 30 days, snoozes past their time and minutes past a day', async () => {
    const count = async (table: string) => Number((await h.db(table).count({ n: '*' }).first())?.n);
    const firings = await count('alert_firings');
    expect(firings).toBeGreaterThan(0);
    await pruneAlerts(h.db);
    expect(await count('alert_firings')).toBe(firings);
    expect(await count('alert_group_minutes')).toBeGreaterThan(0);

    await pruneAlerts(h.db, new Date(Date.now() + 31 * 24 * 3600 * 1000));
    for (const table of ['alert_firings', 'alert_firing_actions', 'alert_snoozes', 'alert_group_minutes'])
      expect(await count(table)).toBe(0);
  });
});

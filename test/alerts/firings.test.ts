// A rule's firings over the API (docs/api.md "Alerts", "Firings"): none for a new rule; newest
// first with each action's outcome, paged by signed tokens, firings at the same microsecond
// included once each. The worker writes firings (domain/alerts/fire/); here rows are inserted as
// it would insert them, to read them back.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AlertFiring, AlertRule } from '../../src/contract/alerts.ts';
import { lastFirings } from '../../src/domain/alerts/rules/queries.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { newId } from '../../src/ids.ts';
import { call, createTestEnv, useWeb } from '../support/harness.ts';

type Page = { firings: AlertFiring[]; next_page_token?: string };

const stack = useWeb();
let env: CreatedEnv;
let rule: AlertRule;
let group: string;

beforeAll(async () => {
  env = await createTestEnv(stack.h.db);
  rule = (
    await call<AlertRule>(stack.web.url, 'POST', `/v1/${env.env.name}/alert_rules`, {
      key: env.secretKey,
      body: {
        name: 'Everything',
        when: 'new_group',
        actions: [
          { type: 'email', to: ['oncall@example.com'] },
          { type: 'slack', url: 'http://127.0.0.1:9/services/T/B/firingsToken' },
        ],
      },
    })
  ).body;
  group = newId('eg');
  await stack.h.db('error_groups').insert({
    id: group,
    env_id: env.env.id,
    fingerprint: randomBytes(16).toString('hex'),
    title: 'TypeError: cart is undefined',
    etag: randomBytes(8).toString('hex'),
    first_seen_time: new Date(),
    last_seen_time: new Date(),
    occurrence_count: 1,
    grouping: JSON.stringify({ method: 'message', frames: [] }),
  });
});

const firings = (query = '') =>
  call<Page>(stack.web.url, 'GET', `/v1/${env.env.name}/alert_rules/${rule.id}/firings${query}`, {
    key: env.secretKey,
  });

async function insertFiring(time: string, reason: string): Promise<string> {
  const id = newId('alf');
  await stack.h.db('alert_firings').insert({
    id,
    rule_id: rule.id,
    env_id: env.env.id,
    group_id: group,
    reason,
    facts: JSON.stringify({ title: 'TypeError: cart is undefined' }),
    time,
  });
  await stack.h.db('alert_firing_actions').insert([
    { firing_id: id, action_index: 0, type: 'email', state: 'sent' },
    { firing_id: id, action_index: 1, type: 'slack', state: 'failed', error: 'HTTP 404 no_service' },
  ]);
  return id;
}

describe('alert firings', () => {
  it('lists none for a rule that never fired', async () => {
    const res = await firings();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ firings: [] });
  });

  it("lists firings newest first with each action's outcome, a page at a time", async () => {
    // Two at the same microsecond: the id orders them, and paging between them loses neither.
    await insertFiring('2026-12-06T10:00:00.000001Z', 'new_group');
    await insertFiring('2026-12-06T10:05:00.123456Z', 'regression');
    await insertFiring('2026-12-06T10:05:00.123456Z', 'regression');
    await insertFiring('2026-12-06T10:05:00.123457Z', 'frequency');
    const all = (await firings()).body.firings;
    expect(all.map((f) => [f.time, f.reason])).toEqual([
      ['2026-12-06T10:05:00.123Z', 'frequency'],
      ['2026-12-06T10:05:00.123Z', 'regression'],
      ['2026-12-06T10:05:00.123Z', 'regression'],
      ['2026-12-06T10:00:00.000Z', 'new_group'],
    ]);
    expect(all[0]).toEqual({
      time: '2026-12-06T10:05:00.123Z',
      group: `${env.env.name}/error_groups/${group}`,
      reason: 'frequency',
      actions: [
        { type: 'email', state: 'sent' },
        { type: 'slack', state: 'failed', error: 'HTTP 404 no_service' },
      ],
    });

    const seen: AlertFiring[] = [];
    let token: string | undefined;
    do {
      const page = await firings(`?page_size=1${token ? `&page_token=${token}` : ''}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.firings);
      token = page.body.next_page_token;
    } while (token);
    expect(seen).toEqual(all);

    const tampered = await firings(`?page_size=1&page_token=x${(await firings('?page_size=1')).body.next_page_token}`);
    expect(tampered.status).toBe(400);
  });

  it("gives each rule's latest firing with its group's title (the console's list)", async () => {
    const last = await lastFirings(stack.h.db, env.env.id, [rule.id, newId('alr')]);
    expect(last).toEqual([
      {
        rule_id: rule.id,
        time: new Date('2026-12-06T10:05:00.123Z'),
        group_id: group,
        title: 'TypeError: cart is undefined',
      },
    ]);
    expect(await lastFirings(stack.h.db, newId('env'), [rule.id])).toEqual([]);
  });
});

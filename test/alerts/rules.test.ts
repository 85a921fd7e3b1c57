// Alert rules over the HTTP API (docs/api.md "Alerts"): create, list, get, update and delete; every
// refusal names its field and writes nothing; at most 50 rules per environment, also when two
// clients create at once; scopes and environments fence them.
import { beforeAll, describe, expect, it } from 'vitest';
import type { AlertRule } from '../../src/contract/alerts.ts';
import { createKey, type CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { newId } from '../../src/ids.ts';
import { call, createTestEnv, sqlNumber, useWeb } from '../support/harness.ts';

type Refusal = {
  code: string;
  message: string;
  details: { fields: { field: string; message: string }[] } & Record<string, unknown>;
};

const stack = useWeb();
let env: CreatedEnv;
let other: CreatedEnv;

beforeAll(async () => {
  env = await createTestEnv(stack.h.db);
  other = await createTestEnv(stack.h.db);
});

const base = (e: CreatedEnv) => `/v1/${e.env.name}/alert_rules`;
const api = <T = AlertRule>(method: string, path: string, body?: unknown, key = env.secretKey) =>
  call<T>(stack.web.url, method, path, { key, ...(body === undefined ? {} : { body }) });
const email = { type: 'email', to: ['oncall@example.com'] };
const ruleBody = (extra: Record<string, unknown> = {}) => ({
  name: 'Checkout errors',
  when: 'new_group',
  actions: [email],
  ...extra,
});
const ruleCount = (e: CreatedEnv) =>
  sqlNumber(stack.h.db, 'select count(*) from alert_rules where env_id = ?', [e.env.id]);

describe('alert rules', () => {
  it('creates with defaults, lists oldest first, gets, updates only what is sent, and deletes', async () => {
    const created = await api('POST', base(env), ruleBody());
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^alr_[0-9a-z]{26}$/),
      name: 'Checkout errors',
      when: 'new_group',
      actions: [email],
      snooze_minutes: 30,
      state: 'enabled',
      create_time: expect.any(String),
      update_time: created.body.create_time,
    });
    const burst = await api(
      'POST',
      base(env),
      ruleBody({
        name: '  Bursts  ',
        when: 'frequency',
        threshold: { events: 100, window_minutes: 60 },
        q: 'service:checkout !level:warning',
        actions: [{ type: 'email', to: ['a@example.com', 'b@example.com', 'a@example.com'] }],
        snooze_minutes: 0,
        state: 'disabled',
      }),
    );
    expect(burst.status).toBe(201);
    expect(burst.body).toMatchObject({
      name: 'Bursts',
      threshold: { events: 100, window_minutes: 60 },
      q: 'service:checkout !level:warning',
      actions: [{ type: 'email', to: ['a@example.com', 'b@example.com'] }],
      snooze_minutes: 0,
      state: 'disabled',
    });

    const first = await api<{ alert_rules: AlertRule[]; next_page_token?: string }>('GET', `${base(env)}?page_size=1`);
    expect(first.body.alert_rules).toEqual([created.body]);
    const second = await api<{ alert_rules: AlertRule[]; next_page_token?: string }>(
      'GET',
      `${base(env)}?page_size=1&page_token=${first.body.next_page_token}`,
    );
    expect(second.body.alert_rules).toEqual([burst.body]);
    expect((await api('GET', `${base(env)}/${created.body.id}`)).body).toEqual(created.body);

    const renamed = await api('PATCH', `${base(env)}/${burst.body.id}`, { name: 'Checkout bursts', state: 'enabled' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({
      ...burst.body,
      name: 'Checkout bursts',
      state: 'enabled',
      update_time: expect.any(String),
    });
    expect(Date.parse(renamed.body.update_time)).toBeGreaterThan(Date.parse(burst.body.update_time));

    // Leaving frequency drops the threshold; coming back needs one.
    const moved = await api('PATCH', `${base(env)}/${burst.body.id}`, { when: 'regression' });
    expect(moved.body.when).toBe('regression');
    expect(moved.body.threshold).toBeUndefined();
    const back = await api<Refusal>('PATCH', `${base(env)}/${burst.body.id}`, { when: 'frequency' });
    expect(back.status).toBe(400);
    expect(back.body.details.fields).toEqual([
      { field: 'body.threshold', message: 'a frequency rule needs a threshold' },
    ]);
    const withThreshold = await api('PATCH', `${base(env)}/${burst.body.id}`, {
      when: 'frequency',
      threshold: { events: 5, window_minutes: 1 },
      q: '',
    });
    expect(withThreshold.body).toMatchObject({ when: 'frequency', threshold: { events: 5, window_minutes: 1 } });
    expect(withThreshold.body.q).toBeUndefined();

    expect((await api('DELETE', `${base(env)}/${burst.body.id}`)).status).toBe(204);
    expect((await api('GET', `${base(env)}/${burst.body.id}`)).status).toBe(404);
    expect((await api('DELETE', `${base(env)}/${burst.body.id}`)).status).toBe(404);
  });

  const refusals: [string, Record<string, unknown>, string][] = [
    ['an empty name', { name: ' ' }, 'body.name'],
    ['a name of 201 characters', { name: 'x'.repeat(201) }, 'body.name'],
    ['an unknown kind', { when: 'sometimes' }, 'body.when'],
    ['frequency without a threshold', { when: 'frequency' }, 'body.threshold'],
    ['a threshold on new_group', { threshold: { events: 1, window_minutes: 1 } }, 'body.threshold'],
    ['0 events', { when: 'frequency', threshold: { events: 0, window_minutes: 1 } }, 'body.threshold.events'],
    [
      'a window over a day',
      { when: 'frequency', threshold: { events: 1, window_minutes: 1441 } },
      'body.threshold.window_minutes',
    ],
    ['no action', { actions: [] }, 'body.actions'],
    ['six actions', { actions: Array(6).fill(email) }, 'body.actions'],
    ['a bad address', { actions: [{ type: 'email', to: ['ok@example.com', 'not-an-email'] }] }, 'body.actions.0.to.1'],
    [
      'eleven addresses',
      { actions: [{ type: 'email', to: [...Array(11).keys()].map((i) => `p${i}@example.com`) }] },
      'body.actions.0.to',
    ],
    ['no addresses', { actions: [email, { type: 'email', to: [] }] }, 'body.actions.1.to'],
    ['a Slack URL that is no URL', { actions: [email, { type: 'slack', url: 'not a url' }] }, 'body.actions.1.url'],
    ['a snooze of a week and a minute', { snooze_minutes: 10_081 }, 'body.snooze_minutes'],
    ['a negative snooze', { snooze_minutes: -1 }, 'body.snooze_minutes'],
  ];

  it.each(refusals)('refuses %s with 400 naming its field, and writes nothing', async (_, extra, field) => {
    const before = await ruleCount(env);
    const res = await api<Refusal>('POST', base(env), ruleBody(extra));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_request');
    expect(res.body.details.fields.map((f) => f.field)).toContain(field);
    expect(await ruleCount(env)).toBe(before);
  });

  it("refuses a search the error list refuses, with the parser's words, at create and update", async () => {
    const res = await api<Refusal>('POST', base(env), ruleBody({ q: 'browser:"Mobile Safari' }));
    expect(res.status).toBe(400);
    expect(res.body.details).toMatchObject({
      field: 'body.q',
      term: 'browser:"Mobile Safari',
      fields: [{ field: 'body.q', message: 'term "browser:\\"Mobile Safari": the quote is not closed' }],
    });
    // The list says the same of the same search.
    const list = await call<Refusal>(
      stack.web.url,
      'GET',
      `/v1/${env.env.name}/error_groups?q=${encodeURIComponent('browser:"Mobile Safari')}`,
      {
        key: env.secretKey,
      },
    );
    expect(list.body.message).toBe(`q: ${res.body.details.fields[0]!.message}`);

    const rule = await api('POST', base(env), ruleBody({ q: 'is:unresolved' }));
    const patch = await api<Refusal>('PATCH', `${base(env)}/${rule.body.id}`, { q: '!oops' });
    expect(patch.body.details.fields[0]!.field).toBe('body.q');
    expect((await api('GET', `${base(env)}/${rule.body.id}`)).body.q).toBe('is:unresolved');
  });

  it('keeps at most 50 rules per environment, also when two clients create at once', async () => {
    const capped = await createTestEnv(stack.h.db);
    const second = await createKey(stack.h.db, capped.env, 'secret', ['observability:write']);
    const keys = [capped.secretKey, second.token];
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        api<Refusal>('POST', base(capped), ruleBody({ name: `rule ${i}` }), keys[i % 2]),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(50);
    expect(statuses.filter((s) => s === 409)).toHaveLength(10);
    expect(answers.find((a) => a.status === 409)!.body).toMatchObject({ code: 'conflict' });
    expect(await ruleCount(capped)).toBe(50);
    const more = await api<Refusal>('POST', base(capped), ruleBody(), keys[0]);
    expect(more.status).toBe(409);
    expect(more.body.message).toContain('50 alert rules');
  });

  it("answers 403 without the scope, and 404 for another environment's rule", async () => {
    const rule = await api('POST', base(env), ruleBody());
    const path = `${base(env)}/${rule.body.id}`;
    const reader = (await createKey(stack.h.db, env.env, 'secret', ['observability:read'])).token;
    const stranger = (await createKey(stack.h.db, env.env, 'secret', ['auth:read'])).token;
    expect((await api('GET', path, undefined, reader)).status).toBe(200);
    expect((await api('GET', `${path}/firings`, undefined, reader)).status).toBe(200);
    for (const [method, where, body] of [
      ['POST', base(env), ruleBody()],
      ['PATCH', path, { name: 'x' }],
      ['DELETE', path, undefined],
    ] as const) {
      const res = await api<Refusal>(method, where, body, reader);
      expect(res.status).toBe(403);
      expect(res.body.details).toMatchObject({ required_scope: 'observability:write' });
    }
    for (const where of [base(env), path, `${path}/firings`]) {
      const res = await api<Refusal>('GET', where, undefined, stranger);
      expect(res.status).toBe(403);
      expect(res.body.details).toMatchObject({ required_scope: 'observability:read' });
    }

    const elsewhere = `${base(other)}/${rule.body.id}`;
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'x' }],
      ['DELETE', undefined],
    ] as const)
      expect((await api(method, elsewhere, body, other.secretKey)).status).toBe(404);
    expect((await api('GET', `${elsewhere}/firings`, undefined, other.secretKey)).status).toBe(404);
    expect((await api('GET', `${base(env)}/${newId('alr')}`)).status).toBe(404);
    expect((await api('GET', path)).body.name).toBe('Checkout errors');
  });
});

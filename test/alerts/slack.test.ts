// A rule's Slack URL (docs/api.md "Alerts", "Slack URLs"): where it may point is the webhook
// endpoints' rule, refused in the same words; it is a secret, so it is sealed at rest (no table
// holds its text), answered masked, and kept by an update that sends the mask back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlertRule } from '../../src/contract/alerts.ts';
import { keyringFromConfig } from '../../src/crypto.ts';
import { slackHint } from '../../src/domain/alerts/rules/actions.ts';
import { openSlackUrl } from '../../src/domain/alerts/send/slack.ts';
import type { StoredAction } from '../../src/domain/alerts/rules/queries.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { startWeb, type WebHandle } from '../../src/server.ts';
import { testConfig } from '../support/config.ts';
import { call, createTestEnv, useWeb } from '../support/harness.ts';

type Refusal = { code: string; message: string; details: { fields: { field: string; message: string }[] } };

const stack = useWeb();
let env: CreatedEnv;
let live: CreatedEnv;
/** The same database behind a web whose operator denies private targets (CAIRN_PRIVATE_TARGETS=deny). */
let denyWeb: WebHandle;

beforeAll(async () => {
  env = await createTestEnv(stack.h.db);
  live = await createTestEnv(stack.h.db, undefined, 'live');
  denyWeb = await startWeb(testConfig(stack.h.database.url, { CAIRN_PRIVATE_TARGETS: 'deny' }), {
    host: '127.0.0.1',
    port: 0,
  });
});
afterAll(async () => {
  await denyWeb?.stop();
});

const email = { type: 'email', to: ['oncall@example.com'] };
const slack = (url: string) => ({ type: 'slack', url });
const create = <T = AlertRule>(e: CreatedEnv, actions: unknown[]) =>
  call<T>(stack.web.url, 'POST', `/v1/${e.env.name}/alert_rules`, {
    key: e.secretKey,
    body: { name: 'Pager', when: 'new_group', actions },
  });
const patch = <T = AlertRule>(id: string, body: unknown) =>
  call<T>(stack.web.url, 'PATCH', `/v1/${env.env.name}/alert_rules/${id}`, { key: env.secretKey, body });
const stored = async (id: string) =>
  ((await stack.h.db('alert_rules').where({ id }).first('actions')) as { actions: StoredAction[] }).actions;

describe('Slack URLs of alert rules', () => {
  it('are refused in a live environment unless https to a public address, in the words an endpoint gets', async () => {
    for (const url of [
      'http://93.184.215.14/services/T0/B0/x',
      'https://127.0.0.1/hook',
      'https://10.1.2.3/hook',
      'https://[::1]/x',
    ]) {
      const res = await create<Refusal>(live, [email, slack(url)]);
      expect(res.status, url).toBe(400);
      expect(res.body.details.fields).toHaveLength(1);
      expect(res.body.details.fields[0]!.field).toBe('body.actions.1.url');
      const endpoint = await call<Refusal>(stack.web.url, 'POST', `/v1/${live.env.name}/webhook_endpoints`, {
        key: live.secretKey,
        body: { url, event_types: ['*'] },
      });
      expect(endpoint.status).toBe(400);
      expect(res.body.details.fields[0]!.message).toBe(endpoint.body.details.fields[0]!.message);
    }
    const ok = await create(live, [slack('https://93.184.215.14/services/T0001/B0002/abcdefgh1234')]);
    expect(ok.status).toBe(201);
    expect(ok.body.actions).toEqual([{ type: 'slack', url: 'https://93.184.215.14/…1234' }]);
  });

  it('are taken over http and to private hosts in a test environment (CAIRN_PRIVATE_TARGETS allows)', async () => {
    const ok = await create(env, [slack('http://127.0.0.1:9/services/T1/B1/privateToken77')]);
    expect(ok.status).toBe(201);
    const res = await create<Refusal>(env, [slack('ftp://127.0.0.1/x')]);
    expect(res.status).toBe(400);
    expect(res.body.details.fields[0]!.field).toBe('body.actions.0.url');
  });

  it('are kept to public hosts in a test environment where the operator denies private targets', async () => {
    const post = (url: string) =>
      call<Refusal>(denyWeb.url, 'POST', `/v1/${env.env.name}/alert_rules`, {
        key: env.secretKey,
        body: { name: 'Denied', when: 'new_group', actions: [slack(url)] },
      });
    expect((await post('http://93.184.215.14/services/T/B/publicOverHttp')).status).toBe(201);
    // A private address, and a name that does not resolve, are refused in the same words.
    const refusals = [];
    for (const url of ['http://127.0.0.1:9/hook', 'http://10.0.0.5/hook', 'http://cairn-no-such-host.invalid/hook']) {
      const res = await post(url);
      expect(res.status, url).toBe(400);
      refusals.push(res.body.details.fields[0]);
    }
    expect(new Set(refusals.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(refusals[0]).toEqual({
      field: 'body.actions.0.url',
      message: expect.stringContaining('CAIRN_PRIVATE_TARGETS=deny'),
    });
  });

  it('are sealed at rest, answered masked, and kept by an update that sends the mask back', async () => {
    const url = 'http://127.0.0.1:9/services/T0SECRET/B0SECRET/sealedTokenXyZ1';
    const created = await create(env, [email, slack(url)]);
    expect(created.status).toBe(201);
    const mask = 'http://127.0.0.1:9/…XyZ1';
    expect(created.body.actions[1]).toEqual({ type: 'slack', url: mask });

    // No table holds the URL's secret part, in any column.
    const { rows: tables } = await stack.h.db.raw<{ rows: { schema: string; name: string }[] }>(
      `select table_schema as schema, table_name as name from information_schema.tables
        where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
    );
    expect(tables.length).toBeGreaterThan(20);
    for (const t of tables) {
      const { rows } = await stack.h.db.raw<{ rows: unknown[] }>(
        `select 1 from ${stack.h.db.raw('??.??', [t.schema, t.name]).toQuery()} as t where t::text like ? limit 1`,
        ['%sealedToken%'],
      );
      expect(rows, `${t.schema}.${t.name}`).toEqual([]);
    }
    const [, sealed] = await stored(created.body.id);
    expect(sealed).toMatchObject({ type: 'slack', url_hint: mask });
    // The send job opens it under the rule's id, and only there.
    const opened = (ruleId: string) =>
      openSlackUrl(keyringFromConfig(stack.h.config), ruleId, (sealed as { url_sealed: string }).url_sealed);
    expect(opened(created.body.id)).toBe(url);
    expect(() => opened('alr_another')).toThrow();

    // The emails change; the mask keeps the stored URL as it was sealed.
    const kept = await patch(created.body.id, { actions: [slack(mask), { type: 'email', to: ['new@example.com'] }] });
    expect(kept.status).toBe(200);
    expect(kept.body.actions).toEqual([slack(mask), { type: 'email', to: ['new@example.com'] }]);
    expect((await stored(created.body.id))[0]).toEqual(sealed);
    // Without actions, they are left as they are.
    expect((await patch(created.body.id, { snooze_minutes: 5 })).body.actions).toEqual(kept.body.actions);

    const unknown = await patch<Refusal>(created.body.id, { actions: [slack('http://127.0.0.1:9/…AAAA')] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details.fields[0]!.field).toBe('body.actions.0.url');
    expect((await stored(created.body.id))[0]).toEqual(sealed);

    const replaced = await patch(created.body.id, {
      actions: [slack('http://127.0.0.1:9/services/T2/B2/anotherToken99')],
    });
    expect(replaced.body.actions).toEqual([slack('http://127.0.0.1:9/…en99')]);
  });

  it('are hinted by origin and the last four characters of a long enough path, never the user part', () => {
    expect(slackHint('https://hooks.slack.com/services/T000/B000/XXXXabcd')).toBe('https://hooks.slack.com/…abcd');
    expect(slackHint('https://user:pass@hooks.example.com/a/b/c/d/e/f/g1234?x=yz')).toBe(
      'https://hooks.example.com/…x=yz',
    );
    expect(slackHint('http://127.0.0.1:9/hook')).toBe('http://127.0.0.1:9/…');
  });
});

// `cairn alerts …` as an operator runs it: the real binary in a child process, over the HTTP API of
// a real web process.
import { beforeAll, describe, expect, it } from 'vitest';
import type { AlertFiring, AlertRule } from '../../src/sdk/alerts.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { runCairn, type CliRun } from '../support/cli.ts';
import { createTestEnv, useWeb } from '../support/harness.ts';

let env: CreatedEnv;

const stack = useWeb();
beforeAll(async () => {
  env = await createTestEnv(stack.h.db);
});

/** The environment comes from CAIRN_ENV unless a test says otherwise. */
const cairn = (args: string[]): Promise<CliRun> =>
  runCairn(args, { CAIRN_API_URL: stack.web.url, CAIRN_SECRET_KEY: env.secretKey, CAIRN_ENV: env.env.name });

async function json<T = AlertRule>(...args: string[]): Promise<T> {
  const r = await cairn([...args, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as T;
}

describe('cairn alerts', () => {
  it('creates a frequency rule with emails and a Slack URL, then lists, gets, shows firings and deletes it', async () => {
    const created = await json(
      'alerts',
      'create',
      '--name',
      'Checkout bursts',
      '--when',
      'frequency',
      '--events',
      '100',
      '--window',
      '60',
      '--q',
      'service:checkout',
      '--email',
      'a@example.com,b@example.com',
      '--email',
      'c@example.com',
      '--slack',
      'http://127.0.0.1:9/services/T/B/cliToken1234',
      '--snooze',
      '0',
    );
    expect(created).toMatchObject({
      id: expect.stringMatching(/^alr_[0-9a-z]{26}$/),
      name: 'Checkout bursts',
      when: 'frequency',
      threshold: { events: 100, window_minutes: 60 },
      q: 'service:checkout',
      actions: [
        { type: 'email', to: ['a@example.com', 'b@example.com', 'c@example.com'] },
        { type: 'slack', url: 'http://127.0.0.1:9/…1234' },
      ],
      snooze_minutes: 0,
      state: 'enabled',
    });

    const list = await json<{ alert_rules: AlertRule[] }>('alerts', 'list');
    expect(list.alert_rules.map((r) => r.id)).toContain(created.id);
    const human = await cairn(['alerts', 'list']);
    expect(human.stdout).toContain(
      `${created.id}  enabled  frequency ≥100/60min  Checkout bursts  → a@example.com,b@example.com,c@example.com; slack http://127.0.0.1:9/…1234`,
    );
    expect(await json('alerts', 'get', created.id)).toEqual(created);
    expect((await cairn(['alerts', 'get', created.id])).stdout).toContain(
      '  search: service:checkout\n  snooze: 0 min',
    );

    expect(await json<{ firings: AlertFiring[] }>('alerts', 'firings', created.id)).toEqual({ firings: [] });
    expect((await cairn(['alerts', 'firings', created.id])).stdout).toBe('no firings\n');

    expect(await json('alerts', 'delete', created.id)).toEqual({ deleted: created.id });
    const gone = await cairn(['alerts', 'get', created.id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('not_found');
  });

  it('says what is missing before calling, and prints the API refusal naming the field', async () => {
    const noThreshold = await cairn([
      'alerts',
      'create',
      '--name',
      'x',
      '--when',
      'frequency',
      '--email',
      'a@example.com',
    ]);
    expect(noThreshold).toMatchObject({ code: 1, stdout: '' });
    expect(noThreshold.stderr).toContain('--events <n> and --window <minutes>');
    const nobody = await cairn(['alerts', 'create', '--name', 'x', '--when', 'new_group']);
    expect(nobody.stderr).toContain('--email <address>… and/or --slack <url>');
    const kind = await cairn(['alerts', 'create', '--name', 'x', '--when', 'often', '--email', 'a@example.com']);
    expect(kind.stderr).toContain('--when is new_group, regression, frequency');

    const bad = await cairn([
      'alerts',
      'create',
      '--name',
      'x',
      '--when',
      'new_group',
      '--email',
      'a@example.com',
      '--q',
      'a"b',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(
      /^error: q: term "a\\"b": a quote must open the term; quote the whole term \(invalid_request, HTTP 400/,
    );
    const created = await json<{ alert_rules: AlertRule[] }>('alerts', 'list');
    expect(created.alert_rules).toEqual([]);
  });
});

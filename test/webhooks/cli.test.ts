// `cairn webhooks …` as an operator runs it: the real binary in a child process, over the HTTP API
// of a real web process. Nothing is delivered here (no worker): these are the endpoint commands.
import { beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import type { Delivery, Endpoint } from '../../src/sdk/webhooks.ts';
import { runCairn, type CliRun } from '../support/cli.ts';
import { createTestEnv, type Harness, useWeb } from '../support/harness.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;

const url = 'http://127.0.0.1:9/hook';

/** The environment comes from CAIRN_ENV unless a test says otherwise. */
const cairn = (args: string[], vars: Record<string, string | undefined> = {}): Promise<CliRun> =>
  runCairn(args, { CAIRN_API_URL: web.url, CAIRN_SECRET_KEY: env.secretKey, CAIRN_ENV: env.env.name, ...vars });

async function json<T = Endpoint>(...args: string[]): Promise<T> {
  const r = await cairn([...args, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as T;
}

async function create(...extra: string[]): Promise<Endpoint> {
  return json('webhooks', 'create', '--url', url, '--events', 'error_group.created,backup.failed', ...extra);
}

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
});

describe('cairn webhooks', () => {
  it('creates an endpoint and shows its secret that once', async () => {
    const r = await cairn([
      'webhooks',
      'create',
      '--url',
      url,
      '--events',
      'error_group.created, backup.failed',
      '--description',
      'ops pager',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const created = JSON.parse(r.stdout) as Endpoint;
    expect(created).toMatchObject({
      id: expect.stringMatching(/^whep_[0-9a-z]{26}$/),
      url,
      event_types: ['error_group.created', 'backup.failed'],
      description: 'ops pager',
      state: 'enabled',
    });
    expect(created.secret).toMatch(/^whsec_/);
    expect(r.stderr).toContain('shown only once');

    const human = await cairn(['webhooks', 'create', '--url', url, '--events', '*']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^whep_[0-9a-z]{26} {2}enabled {2}http:\/\/127\.0\.0\.1:9\/hook {2}\*\n/);
    expect(human.stdout).toMatch(/signing secret: whsec_\S+\n/);
    expect(human.stdout).toContain('shown only once');

    const typo = await cairn(['webhooks', 'create', '--url', url, '--events', 'error_group.created,backup.done']);
    expect(typo).toMatchObject({ code: 1, stdout: '' });
    expect(typo.stderr).toContain('unknown: backup.done');
    expect(typo.stderr).toContain('backup.failed');
  });

  it('lists and gets endpoints, never with the secret', async () => {
    const created = await create();
    const list = await json<{ webhook_endpoints: Endpoint[] }>('webhooks', 'list');
    const listed = list.webhook_endpoints.find((e) => e.id === created.id);
    expect(listed).toMatchObject({ id: created.id, url, state: 'enabled' });
    expect(list.webhook_endpoints.every((e) => e.secret === undefined)).toBe(true);
    expect((await cairn(['webhooks', 'list'])).stdout).toContain(
      `${created.id}  enabled  ${url}  error_group.created,backup.failed`,
    );

    const got = await json('webhooks', 'get', created.id);
    expect(got).toMatchObject({ id: created.id, url, event_types: ['error_group.created', 'backup.failed'] });
    expect(got).not.toHaveProperty('secret');
    const human = await cairn(['webhooks', 'get', created.id]);
    expect(human.stdout).toContain(created.id);
    expect(human.stdout).not.toContain('whsec_');
  });

  it('disables and enables an endpoint, and changes its fields', async () => {
    const created = await create();
    const disabled = await json('webhooks', 'update', created.id, '--disable');
    expect(disabled).toMatchObject({ state: 'disabled', disabled_reason: expect.any(String) });
    expect((await cairn(['webhooks', 'get', created.id])).stdout).toContain(
      `disabled ${url}  error_group.created,backup.failed  (${disabled.disabled_reason})`,
    );
    const enabled = await json('webhooks', 'update', created.id, '--enable', '--events', '*', '--description', 'x');
    expect(enabled).toMatchObject({ state: 'enabled', event_types: ['*'], description: 'x' });
    expect(enabled).not.toHaveProperty('disabled_reason');

    const both = await cairn(['webhooks', 'update', created.id, '--enable', '--disable']);
    expect(both).toMatchObject({ code: 1, stdout: '' });
    expect(both.stderr).toContain('not both');
    const nothing = await cairn(['webhooks', 'update', created.id]);
    expect(nothing).toMatchObject({ code: 1, stdout: '' });
    expect(nothing.stderr).toContain('nothing to change');
  });

  it('rotates the secret to a different one', async () => {
    const created = await create();
    const rotated = await json('webhooks', 'rotate-secret', created.id);
    expect(rotated.id).toBe(created.id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    const human = await cairn(['webhooks', 'rotate-secret', created.id]);
    expect(human.code, human.stderr).toBe(0);
    const shown = /signing secret: (whsec_\S+)/.exec(human.stdout)?.[1];
    expect(shown).toBeDefined();
    expect([created.secret, rotated.secret]).not.toContain(shown);
  });

  it('lists no deliveries for a fresh endpoint and refuses to redeliver an unknown message', async () => {
    const created = await create();
    const page = await json<{ deliveries: Delivery[]; next_page_token?: string }>('webhooks', 'deliveries', created.id);
    expect(page).toEqual({ deliveries: [] });
    expect((await cairn(['webhooks', 'deliveries', created.id])).stdout).toBe('no deliveries\n');

    const unknown = `whmsg_${'0'.repeat(26)}`;
    const r = await cairn(['webhooks', 'redeliver', created.id, unknown]);
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(r.stderr).toContain(`no delivery ${unknown}`);
    expect(r.stderr).toContain('HTTP 404');
    expect(r.stderr).not.toMatch(/\n\s+at /);

    const malformed = await cairn(['webhooks', 'redeliver', created.id, 'msg_1']);
    expect(malformed).toMatchObject({ code: 1, stdout: '' });
    expect(malformed.stderr).toContain('not a webhook message id');
  });

  it('deletes an endpoint, after which it is not found', async () => {
    const created = await create();
    expect(await json<{ deleted: string }>('webhooks', 'delete', created.id)).toEqual({ deleted: created.id });
    const gone = await cairn(['webhooks', 'get', created.id]);
    expect(gone).toMatchObject({ code: 1, stdout: '' });
    expect(gone.stderr).toContain(`no webhook endpoint ${created.id}`);
    const again = await cairn(['webhooks', 'delete', created.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('HTTP 404');
  });

  it('takes the environment from --env when CAIRN_ENV is unset, and says so when neither is given', async () => {
    const created = await create();
    const r = await cairn(['webhooks', 'get', created.id, '--env', env.env.name, '--json'], { CAIRN_ENV: undefined });
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as Endpoint).id).toBe(created.id);
    const none = await cairn(['webhooks', 'list'], { CAIRN_ENV: undefined });
    expect(none).toMatchObject({ code: 1, stdout: '' });
    expect(none.stderr).toContain('CAIRN_ENV');
  });
});

// Secrets nested in events, from outside over HTTP: events shaped as sentry-python (a Django form
// in `request.data`, `/store/`), the real @sentry/node (a form body and a JSON body in
// `request.data`, user, context, extras and a breadcrumb set on its scope) and @sentry/browser
// (fetch, xhr and console breadcrumbs with nested data, contexts) send them, and a native capture
// whose breadcrumb data hold a JSON body and a form body. Once the worker has processed them, no
// secret is in the event read back, nor anywhere in the database (stored bodies inflated); the
// value under each sensitive key, whatever its depth and type, reads `[Filtered]`, and what sits
// beside it stays as sent.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { dsnFor } from '../../src/domain/errors/sentry/client-keys.ts';
import { dumpDatabase } from '../support/pg.ts';
import { capture, readStored, sampleEvent, useStack } from '../errors/support.ts';

const t = useStack();

/** Every secret planted, by where it was put: none may appear in any answer or table. */
const planted: string[] = [];
/** A secret no text rule finds by itself (only its key gives it away), unique to this run. */
const secret = (what: string): string => {
  const s = `${what}-${randomBytes(6).toString('hex')}`;
  planted.push(s);
  return s;
};
/** A secret of several words: a text rule that stops at a space would leave its tail. */
const phrase = (what: string): string => {
  const s = `open sesame ${what}-${randomBytes(6).toString('hex')}`;
  planted.push(s, s.split(' ').at(-1)!);
  return s;
};
const hex32 = () => randomBytes(16).toString('hex');
const F = '[Filtered]';

interface Stored {
  breadcrumbs: { category?: string; data?: Record<string, unknown> }[];
  tags: Record<string, string>;
  scrub_counts: Record<string, number>;
  sentry?: Record<string, Record<string, unknown>>;
}

const read = async (id: string): Promise<Stored> => (await readStored<Stored>(t.s.web, t.env, id, 60_000)).body;

function expectNoSecret(where: string, text: string): void {
  for (const s of planted) expect(text, `${s} in ${where}`).not.toContain(s);
}

const post = async (path: string, body: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${t.s.web.url}${path}`, { method: 'POST', headers, body });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as { id: string };
};

describe('secrets nested in events', () => {
  it('sentry-python (Django, /store/): form data, headers, cookies, user, extra, contexts, breadcrumbs', async () => {
    const id = hex32();
    const event = {
      event_id: id,
      timestamp: '2026-11-28T10:00:00.000000Z',
      platform: 'python',
      level: 'error',
      logger: 'django.request',
      server_name: 'web-1',
      release: 'shop@3.1.0',
      environment: 'production',
      sdk: {
        name: 'sentry.python.django',
        version: '2.19.0',
        packages: [{ name: 'pypi:sentry-sdk', version: '2.19.0' }],
      },
      exception: {
        values: [
          {
            type: 'ValidationError',
            value: "['Invalid credentials']",
            module: 'django.core.exceptions',
            mechanism: { type: 'django', handled: false },
            stacktrace: {
              frames: [
                {
                  filename: 'shop/views.py',
                  abs_path: '/srv/shop/views.py',
                  function: 'login',
                  module: 'shop.views',
                  lineno: 42,
                  in_app: true,
                  vars: { password: `'${secret('frame-var')}'` },
                },
              ],
            },
          },
        ],
      },
      request: {
        url: 'https://shop.example.com/accounts/login/',
        method: 'POST',
        query_string: `next=%2Faccount%2F&session=${secret('query-session')}`,
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64)',
          'X-Csrftoken': secret('csrf-header'),
          // A header whose value is an object: its keys are read too.
          'X-Debug': { secret: secret('header-object'), trace: 'on' },
        },
        cookies: { theme: 'dark', sessionid: secret('cookie-session') },
        env: { SERVER_NAME: 'web-1', SERVER_PORT: '8000' },
        data: {
          username: 'ann',
          password: phrase('form-password'),
          csrfmiddlewaretoken: secret('form-csrf'),
          remember: 'on',
          profile: { display: 'Ann', api_key: secret('form-profile-key') },
        },
      },
      user: { id: '7', username: 'ann', password: secret('user-password') },
      extra: {
        'sys.argv': ['manage.py', 'runserver'],
        form: {
          username: 'ann',
          password: phrase('extra-password'),
          list: [{ label: 'primary', api_key: secret('list-key') }],
        },
      },
      contexts: {
        runtime: { name: 'CPython', version: '3.12.4' },
        app: { name: 'shop', api_key: secret('context-key'), retries: { max: 3, token: secret('context-token') } },
      },
      breadcrumbs: {
        values: [
          {
            type: 'default',
            category: 'query',
            level: 'info',
            message: 'SELECT "auth_user"."id" FROM "auth_user" WHERE "auth_user"."username" = %s',
            data: { 'db.params': ['ann'], connection: { host: 'db.internal', password: secret('crumb-db-password') } },
            timestamp: '2026-11-28T09:59:59.900000Z',
          },
        ],
      },
      tags: { 'django.version': '5.1', url: '/accounts/login/' },
    };
    const auth = `Sentry sentry_version=7, sentry_client=sentry.python/2.19.0, sentry_key=${t.env.clientKey.publicKey}`;
    expect(
      await post(`/api/${t.env.clientKey.projectNumber}/store/`, JSON.stringify(event), { 'x-sentry-auth': auth }),
    ).toEqual({ id });

    const stored = await read(id);
    expectNoSecret('the event', JSON.stringify(stored));
    const s = stored.sentry!;
    expect(s.request).toMatchObject({
      url: 'https://shop.example.com/accounts/login/',
      query_string: `next=%2Faccount%2F&session=${F}`,
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        'X-Csrftoken': F,
        'X-Debug': { secret: F, trace: 'on' },
      },
      cookies: { theme: 'dark', sessionid: F },
      data: {
        username: 'ann',
        password: F,
        csrfmiddlewaretoken: F,
        remember: 'on',
        profile: { display: 'Ann', api_key: F },
      },
    });
    expect(s.user).toEqual({ id: '7', username: 'ann', password: F });
    expect(s.extra).toEqual({
      'sys.argv': ['manage.py', 'runserver'],
      form: { username: 'ann', password: F, list: [{ label: 'primary', api_key: F }] },
    });
    expect(s.contexts).toMatchObject({ app: { name: 'shop', api_key: F, retries: { max: 3, token: F } } });
    const crumb = JSON.parse(stored.breadcrumbs[0]!.data!.connection as string) as unknown;
    expect(crumb).toEqual({ host: 'db.internal', password: F });
    expect(stored.scrub_counts.sensitive_key).toBeGreaterThanOrEqual(12);
  });

  it('@sentry/node (the real SDK): form and JSON bodies, user, context, extras and breadcrumbs', async () => {
    const secrets = {
      userPassword: secret('node-user-password'),
      contextKey: secret('node-context-key'),
      dbPassword: secret('node-db-password'),
      extraPassword: secret('node-extra-password'),
      listKey: secret('node-list-key'),
      crumbSecret: secret('node-crumb-secret'),
      cookieSession: secret('node-cookie'),
      headerKey: secret('node-header-key'),
      authorization: secret('node-authorization'),
      querySession: secret('node-query-session'),
      formPassword: secret('node-form-password'),
      jsonPassword: phrase('node-json-password'),
      jsonToken: secret('node-json-token'),
    };
    const child = spawn(process.execPath, ['test/security/fixtures/nested-secrets-node-app.mjs'], {
      env: {
        ...process.env,
        SENTRY_DSN: dsnFor(t.s.web.url, t.env.clientKey.publicKey, t.env.clientKey.projectNumber),
        SECRETS: JSON.stringify(secrets),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code, out).toBe(0);
    const ids = [...out.matchAll(/^event ([0-9a-f]{32})$/gm)].map((m) => m[1]!);
    expect(ids, out).toHaveLength(2);

    const [form, json] = await Promise.all(ids.map(read));
    for (const e of [form!, json!]) {
      expectNoSecret('the event', JSON.stringify(e));
      const s = e.sentry!;
      expect(s.user).toMatchObject({ id: '7', username: 'ann', password: F });
      expect(s.contexts).toMatchObject({ app: { name: 'shop', api_key: F, db: { host: 'db.internal', passwd: F } } });
      expect(s.extra).toEqual({ form: { username: 'ann', password: F, list: [{ label: 'primary', api_key: F }] } });
      const auth = e.breadcrumbs.find((b) => b.category === 'auth')!;
      expect(auth.data).toMatchObject({ user: 'ann', attempt: 2 });
      expect(JSON.parse(auth.data!.upstream as string)).toEqual({ client_secret: F, region: 'eu-west-1' });
    }
    // The SDK sends a body as the text that came: a form's and a JSON document's keys are read all the same.
    expect(form!.sentry!.request!.data).toBe(`username=ann&password=${F}&remember=on`);
    expect(JSON.parse(json!.sentry!.request!.data as string)).toEqual({
      username: 'ann',
      password: F,
      device: { name: 'laptop', token: F },
    });
  });

  it('@sentry/browser (/envelope/): fetch, xhr and console breadcrumbs with nested data, contexts, extra', async () => {
    const id = hex32();
    const event = {
      event_id: id,
      timestamp: Date.now() / 1000,
      platform: 'javascript',
      level: 'error',
      release: 'web@4.2.0',
      environment: 'production',
      sdk: {
        name: 'sentry.javascript.browser',
        version: '11.12.0',
        packages: [{ name: 'npm:@sentry/browser', version: '11.12.0' }],
      },
      exception: {
        values: [
          {
            type: 'TypeError',
            value: "Cannot read properties of undefined (reading 'total')",
            mechanism: { type: 'auto.browser.global_handlers.onerror', handled: false },
            stacktrace: {
              frames: [
                {
                  filename: 'https://shop.example/assets/app.min.js',
                  function: 'checkout',
                  lineno: 1,
                  colno: 4210,
                  in_app: true,
                },
              ],
            },
          },
        ],
      },
      request: {
        url: `https://shop.example/checkout?step=2&session_key=${secret('url-session')}`,
        headers: { Referer: 'https://shop.example/cart', 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0' },
      },
      user: { id: 'u-9', segment: 'beta', auth: { provider: 'github', access: secret('user-auth') } },
      contexts: {
        trace: { trace_id: '0af7651916cd43dd8448eb211c80319c', span_id: 'b7ad6b7169203331' },
        app: { name: 'web', api_key: secret('browser-context-key') },
        checkout: { cart: { items: 3, payment: { provider: 'stripe', card_token: secret('card-token') } } },
      },
      extra: {
        // Whole values of any type go: an object, a number, an array.
        state: { route: '/checkout', auth: { accessToken: secret('state-token'), expires: 3600 } },
        api_key: 73914285619,
        tokens: [secret('token-a'), secret('token-b')],
      },
      breadcrumbs: [
        { timestamp: Date.now() / 1000 - 3, category: 'ui.click', message: 'body > main > button#buy' },
        {
          timestamp: Date.now() / 1000 - 2,
          category: 'fetch',
          type: 'http',
          data: {
            method: 'POST',
            url: `https://api.shop.example/v1/orders?apikey=${secret('fetch-key')}`,
            status_code: 201,
          },
        },
        {
          timestamp: Date.now() / 1000 - 1,
          category: 'xhr',
          type: 'http',
          data: {
            method: 'POST',
            url: '/api/session',
            status_code: 200,
            body: { email_hint: 'a***', password: phrase('xhr-password') },
          },
        },
        {
          timestamp: Date.now() / 1000,
          category: 'console',
          level: 'log',
          message: 'config loaded',
          data: {
            logger: 'console',
            arguments: ['config loaded', { config: { apiKey: secret('console-key'), region: 'eu' } }],
          },
        },
      ],
    };
    const body = [
      JSON.stringify({ event_id: id, sent_at: new Date().toISOString() }),
      JSON.stringify({ type: 'event' }),
      JSON.stringify(event),
    ].join('\n');
    const path = `/api/${t.env.clientKey.projectNumber}/envelope/?sentry_key=${t.env.clientKey.publicKey}&sentry_version=7&sentry_client=sentry.javascript.browser%2F11.12.0`;
    expect(await post(path, body, { 'content-type': 'text/plain;charset=UTF-8' })).toEqual({ id });

    const stored = await read(id);
    expectNoSecret('the event', JSON.stringify(stored));
    const s = stored.sentry!;
    expect(s.request!.url).toBe(`https://shop.example/checkout?step=2&session_key=${F}`);
    expect(s.user).toEqual({ id: 'u-9', segment: 'beta', auth: F });
    expect(s.contexts).toMatchObject({
      app: { name: 'web', api_key: F },
      checkout: { cart: { items: 3, payment: { provider: 'stripe', card_token: F } } },
    });
    expect(s.extra).toEqual({ state: { route: '/checkout', auth: F }, api_key: F, tokens: F });
    const [click, fetched, xhr, consoled] = stored.breadcrumbs;
    expect(click).toMatchObject({ category: 'ui.click', message: 'body > main > button#buy' });
    expect(fetched!.data).toMatchObject({
      method: 'POST',
      url: `https://api.shop.example/v1/orders?apikey=${F}`,
      status_code: 201,
    });
    expect(JSON.parse(xhr!.data!.body as string)).toEqual({ email_hint: 'a***', password: F });
    expect(JSON.parse(consoled!.data!.arguments as string)).toEqual([
      'config loaded',
      { config: { apiKey: F, region: 'eu' } },
    ]);
  });

  it('a native capture: breadcrumb data holding a JSON body and a form body, and tags', async () => {
    const uid = await capture(
      t.s.web,
      t.env,
      sampleEvent({
        breadcrumbs: [
          {
            category: 'http',
            data: {
              request: JSON.stringify({ user: 'ann', password: phrase('native-json-password') }),
              form: `auth=${secret('native-form-auth')}&user=ann`,
            },
          },
        ],
        tags: { credentials: secret('native-tag'), route: '/login' },
      }),
    );
    const stored = await read(uid);
    expectNoSecret('the event', JSON.stringify(stored));
    expect(JSON.parse(stored.breadcrumbs[0]!.data!.request as string)).toEqual({ user: 'ann', password: F });
    expect(stored.breadcrumbs[0]!.data!.form).toBe(`auth=${F}&user=ann`);
    expect(stored.tags).toMatchObject({ credentials: F, route: '/login' });
  });

  // Last: every event above has been stored by now.
  it('leaves no secret in any table: stored bodies (inflated), groups, ids, the queue', async () => {
    const dump = await dumpDatabase(t.h.db);
    // The bodies were read (inflated): what sat beside the secrets is there.
    expect(dump.text).toContain('eu-west-1');
    expectNoSecret('the database', dump.text);
  });
});

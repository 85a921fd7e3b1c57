// Interoperability: social sign-in against a real OpenID Provider (the `oidc-provider` package on
// 127.0.0.1), not the hand-written test/support/idp.ts. The provider plays Google on the service's
// shared client: discovery, PKCE required, the RFC 9207 `iss` response parameter, RS256 ID tokens
// from its own JWKS, its own login and consent pages (driven over plain HTTP with a cookie jar).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { locationOf, readForm, startOidcProvider, UserAgent, type OidcProvider } from '../support/oidc-provider.ts';

const account = { sub: 'op-user-1', email: 'margaret@example.com', email_verified: true, name: 'Margaret Hamilton' };
const clientId = 'cairn-interop-client';
const clientSecret = 'interop-secret-0123456789abcdef';
const app = 'https://app.example.test/auth/done';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let op: OidcProvider;

beforeAll(async () => {
  // The provider listens first (Cairn's config names its issuer); Cairn's callback, known once
  // Cairn runs, is registered when the provider answers its first request. oidc-provider's default
  // (conformIdTokenClaims) returns the email and profile claims only from UserInfo (OIDC Core §5.4),
  // unlike Google: Cairn must fetch UserInfo when the ID token has no email (the hand-written
  // provider in test/support/idp.ts covers the Google-like case).
  op = await startOidcProvider({
    clientId,
    clientSecret,
    account,
    redirectUri: () => `${h.config.CAIRN_BASE_URL}/v1/oidc/callback`,
    tokenEndpointAuthMethod: 'client_secret_post',
    conformIdTokenClaims: true,
  });
});
afterAll(async () => {
  await op?.close();
});
const stack = useWeb({ atBaseUrl: true }, () => ({
  CAIRN_GOOGLE_CLIENT_ID: clientId,
  CAIRN_GOOGLE_CLIENT_SECRET: clientSecret,
  CAIRN_GOOGLE_ISSUER: op.issuer,
}));
beforeAll(async () => {
  ({ h, web } = stack);
  expect(web.url).toBe(h.config.CAIRN_BASE_URL);
  env = await createTestEnv(h.db);
  const put = (path: string, body: unknown) =>
    call(web.url, 'PUT', `/v1/${env.env.name}/${path}`, { key: env.secretKey, body });
  expect((await put('identity_settings', { redirect_urls: [app] })).status).toBe(200);
  expect((await put('social_providers/google', {})).status).toBe(200);
});

describe('social sign-in against oidc-provider', () => {
  it("runs start → authorize → login → consent → callback → ticket → session with the provider's email", async () => {
    const browser = new UserAgent();

    // 1. Cairn's start sends the browser to the provider's authorization endpoint (from discovery).
    const q = new URLSearchParams({ publishable_key: env.publishableKey, redirect_url: app });
    const start = await browser.get(`${web.url}/v1/client/oauth/google/start?${q}`);
    expect(start.status).toBe(302);
    const authorize = locationOf(start, web.url);
    expect(authorize.origin).toBe(op.issuer);
    const discovered = (await (await fetch(`${op.issuer}/.well-known/openid-configuration`)).json()) as {
      authorization_endpoint: string;
    };
    expect(`${authorize.origin}${authorize.pathname}`).toBe(discovered.authorization_endpoint);
    const ask = Object.fromEntries(authorize.searchParams);
    expect(ask).toMatchObject({
      client_id: clientId,
      response_type: 'code',
      scope: 'openid email profile',
      redirect_uri: `${h.config.CAIRN_BASE_URL}/v1/oidc/callback`,
      code_challenge_method: 'S256',
    });
    expect(ask.state!.length).toBeGreaterThan(30);
    expect(ask.nonce!.length).toBeGreaterThan(30);
    expect(ask.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // 2. The provider accepts the request (a bad one would come back as an error page or redirect)
    //    and sends the browser to its login interaction.
    const authorized = await browser.get(authorize.toString());
    expect(authorized.status).toBe(303);
    const loginPage = locationOf(authorized, authorize.toString());
    expect(loginPage.origin).toBe(op.issuer);
    expect(loginPage.pathname).toMatch(/^\/interaction\/[\w-]+$/);

    // 3. Log in.
    const loginHtml = await browser.get(loginPage.toString());
    expect(loginHtml.status).toBe(200);
    const login = readForm(await loginHtml.text(), loginPage.toString());
    expect(login).toMatchObject({ method: 'post', fields: { prompt: 'login' } });
    const loggedIn = await browser.postForm(login.action, {
      ...login.fields,
      login: account.sub,
      password: 'any password',
    });
    expect(loggedIn.status).toBe(303);
    const resume = await browser.get(locationOf(loggedIn, login.action).toString());
    expect(resume.status).toBe(303);
    const consentPage = locationOf(resume, login.action);
    expect(consentPage.pathname).toMatch(/^\/interaction\/[\w-]+$/);
    expect(op.accountLookups).toContain(account.sub);

    // 4. Consent to the scopes Cairn asked for.
    const consentHtml = await browser.get(consentPage.toString());
    expect(consentHtml.status).toBe(200);
    const consentText = await consentHtml.text();
    expect(consentText).toContain('email');
    const consent = readForm(consentText, consentPage.toString());
    expect(consent.fields.prompt).toBe('consent');
    const consented = await browser.postForm(consent.action, consent.fields);
    expect(consented.status).toBe(303);
    const back = await browser.get(locationOf(consented, consent.action).toString());
    expect(back.status).toBe(303);

    // 5. The provider answers on Cairn's callback with the code, the state and (RFC 9207) its issuer.
    const callback = locationOf(back, consent.action);
    expect(`${callback.origin}${callback.pathname}`).toBe(`${h.config.CAIRN_BASE_URL}/v1/oidc/callback`);
    expect(callback.searchParams.get('error')).toBeNull();
    expect(callback.searchParams.get('state')).toBe(ask.state);
    expect(callback.searchParams.get('iss')).toBe(op.issuer);
    expect(callback.searchParams.get('code')).toBeTruthy();

    // 6. Cairn redeems the code at the provider (client authentication, PKCE verifier) and checks
    //    the ID token, then sends the browser to redirect_url with a ticket (server mode).
    const done = await browser.get(callback.toString());
    const final = locationOf(done, callback.toString());
    expect({
      status: done.status,
      error: final.searchParams.get('error'),
      description: final.searchParams.get('error_description'),
      tokenRequests: op.tokenRequests,
    }).toEqual({
      status: 303,
      error: null,
      description: null,
      tokenRequests: [
        { outcome: 'success', clientAuth: 'client_secret_post', grantType: 'authorization_code', codeVerifier: true },
      ],
    });
    expect(`${final.origin}${final.pathname}`).toBe(app);
    expect(final.hash).toBe('');
    const ticket = final.searchParams.get('auth_ticket');
    expect(ticket).toBeTruthy();

    // 7. The app redeems the ticket with the secret key: a session for the provider's user.
    const redeemed = await call<{
      session: { id: string; method: string };
      session_token: string;
      user: { id: string; email: string; email_verified: boolean; has_password: boolean };
    }>(web.url, 'POST', '/v1/client/tickets:redeem', { key: env.secretKey, body: { ticket } });
    expect(redeemed).toMatchObject({
      status: 200,
      body: {
        session: { method: 'oauth_google' },
        user: { email: account.email, email_verified: true, has_password: false },
      },
    });
    const identity = await h
      .db('end_user_identities')
      .where({ env_id: env.env.id, provider: 'google', subject: account.sub })
      .first();
    expect(identity).toMatchObject({ end_user_id: redeemed.body.user.id, display_name: account.name });
    const session = await call(web.url, 'GET', '/v1/client/session', { key: redeemed.body.session_token });
    expect(session).toMatchObject({ status: 200, body: { user: { id: redeemed.body.user.id, email: account.email } } });

    // The state was single-use: delivering the same callback again finds no transaction.
    const replay = await browser.get(callback.toString());
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ code: 'invalid_request', details: { reason: 'invalid_state' } });
  });

  it('refuses explicit endpoints for an OpenID provider: they come from discovery', async () => {
    const res = await call(web.url, 'PUT', `/v1/${env.env.name}/social_providers/google`, {
      key: env.secretKey,
      body: {
        client_id: 'own-client',
        client_secret: 'own-secret-value',
        issuer: op.issuer.replace('http:', 'https:'),
        token_endpoint: 'https://evil.example/token',
      },
    });
    expect(res).toMatchObject({
      status: 400,
      body: { code: 'invalid_request', message: expect.stringMatching(/discovery/) },
    });
  });
});

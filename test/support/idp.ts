// A small identity provider on 127.0.0.1 for social sign-in tests, playing Google (OIDC, `iss` in
// the authorization response per RFC 9207), Apple (OIDC, form_post, ES256 client-secret JWT
// checked against the developer's public key, the `user` JSON on first sign-in) or GitHub (plain
// OAuth 2 plus /user and /user/emails). It enforces PKCE S256, exact redirect_uri, one-use codes
// and client authentication like the real ones, and can be told to break the next ID token in
// each way a relying party must notice.
import { generateKeyPairSync, randomBytes, sign, verify, createHash, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type IdpKind = 'google' | 'apple' | 'github';

export interface IdpUser {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface Breakage {
  nonce?: string;
  iss?: string;
  aud?: string;
  /** Signed with a key that is not in the JWKS. */
  foreignKey?: boolean;
  algNone?: boolean;
  expired?: boolean;
  /** A wrong `iss` authorization response parameter (RFC 9207). */
  responseIss?: string;
}

export interface Idp {
  url: string;
  kind: IdpKind;
  clientId: string;
  clientSecret: string;
  /** Apple: the developer's .p8 private key (PEM) the relying party signs client secrets with. */
  applePrivateKeyPem: string;
  appleTeamId: string;
  appleKeyId: string;
  user: IdpUser;
  /** GitHub's /user/emails answer. */
  githubEmails: { email: string; primary: boolean; verified: boolean }[];
  /** Applied to the next ID token only. */
  breakNext: Breakage;
  /** Shows a "Continue" page instead of answering at once (for the browser tests). */
  interactive: boolean;
  redeemedCodes: number;
  close(): Promise<void>;
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

function jwt(header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject | null): string {
  const data = `${b64(header)}.${b64(payload)}`;
  if (!key) return `${data}.`;
  return `${data}.${sign('sha256', Buffer.from(data), key).toString('base64url')}`;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString());
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export async function startIdp(kind: IdpKind, user: IdpUser): Promise<Idp> {
  const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const foreign = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const apple = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const codes = new Map<
    string,
    { clientId: string; redirectUri: string; challenge: string; nonce: string | undefined }
  >();
  const tokens = new Map<string, true>();
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const idp: Idp = {
    url,
    kind,
    clientId: `client-${kind}`,
    clientSecret: `secret-${randomBytes(8).toString('hex')}`,
    applePrivateKeyPem: apple.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    appleTeamId: 'TEAM123456',
    appleKeyId: 'KEY1234567',
    user,
    githubEmails: [],
    breakNext: {},
    interactive: false,
    redeemedCodes: 0,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };

  /** Apple's client secret is an ES256 JWT from the developer's key: check it as Apple does. */
  function appleClientOk(secret: string | null): boolean {
    const [h, p, s] = (secret ?? '').split('.');
    if (!h || !p || !s) return false;
    const ok = verify(
      'sha256',
      Buffer.from(`${h}.${p}`),
      { key: apple.publicKey, dsaEncoding: 'ieee-p1363' },
      Buffer.from(s, 'base64url'),
    );
    const head = JSON.parse(Buffer.from(h, 'base64url').toString()) as Record<string, unknown>;
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, number | string>;
    const now = Date.now() / 1000;
    return (
      ok &&
      head.alg === 'ES256' &&
      head.kid === idp.appleKeyId &&
      claims.iss === idp.appleTeamId &&
      claims.sub === idp.clientId &&
      claims.aud === url &&
      Number(claims.exp) > now &&
      Number(claims.iat) <= now + 5
    );
  }

  function idToken(nonce: string | undefined): string {
    const b = idp.breakNext;
    idp.breakNext = {};
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = {
      iss: b.iss ?? url,
      aud: b.aud ?? idp.clientId,
      sub: idp.user.sub,
      iat: b.expired ? now - 7200 : now,
      exp: b.expired ? now - 3600 : now + 600,
      ...(nonce !== undefined || b.nonce ? { nonce: b.nonce ?? nonce } : {}),
      ...(idp.user.email ? { email: idp.user.email } : {}),
      // Apple sends email_verified as a string.
      ...(idp.user.email_verified !== undefined
        ? { email_verified: kind === 'apple' ? String(idp.user.email_verified) : idp.user.email_verified }
        : {}),
      ...(idp.user.name && kind !== 'apple' ? { name: idp.user.name } : {}),
    };
    if (b.algNone) return jwt({ alg: 'none', typ: 'JWT' }, claims, null);
    return jwt(
      { alg: 'RS256', kid: b.foreignKey ? 'other' : 'k1', typ: 'JWT' },
      claims,
      b.foreignKey ? foreign.privateKey : signing.privateKey,
    );
  }

  function answerAuthorization(res: ServerResponse, q: URLSearchParams): void {
    const code = randomBytes(16).toString('hex');
    codes.set(code, {
      clientId: q.get('client_id')!,
      redirectUri: q.get('redirect_uri')!,
      challenge: q.get('code_challenge')!,
      nonce: q.get('nonce') ?? undefined,
    });
    const fields: Record<string, string> = { code, state: q.get('state') ?? '' };
    if (kind === 'google') fields.iss = idp.breakNext.responseIss ?? url;
    if (kind === 'apple' && idp.user.name)
      fields.user = JSON.stringify({
        name: { firstName: idp.user.name.split(' ')[0], lastName: idp.user.name.split(' ').slice(1).join(' ') },
        email: idp.user.email,
      });
    if (q.get('response_mode') === 'form_post') {
      res.writeHead(200, { 'content-type': 'text/html' });
      const inputs = Object.entries(fields)
        .map(([k, v]) => `<input type="hidden" name="${k}" value="${escape(v)}">`)
        .join('');
      res.end(
        `<!doctype html><html><body onload="document.forms[0].submit()"><form method="post" action="${escape(q.get('redirect_uri')!)}">${inputs}<noscript><button>Continue</button></noscript></form></body></html>`,
      );
      return;
    }
    const target = new URL(q.get('redirect_uri')!);
    for (const [k, v] of Object.entries(fields)) target.searchParams.set(k, v);
    res.writeHead(302, { location: target.toString() });
    res.end();
  }

  server.on('request', (req, res) => {
    void (async () => {
      const u = new URL(req.url ?? '/', url);
      if (u.pathname === '/.well-known/openid-configuration' && kind !== 'github') {
        return json(res, 200, {
          issuer: url,
          authorization_endpoint: `${url}/authorize`,
          token_endpoint: `${url}/token`,
          jwks_uri: `${url}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
          code_challenge_methods_supported: ['S256'],
          ...(kind === 'google' ? { authorization_response_iss_parameter_supported: true } : {}),
        });
      }
      if (u.pathname === '/jwks')
        return json(res, 200, {
          keys: [{ ...signing.publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' }],
        });
      if (u.pathname === '/authorize' && req.method === 'GET') {
        const q = u.searchParams;
        if (
          q.get('client_id') !== idp.clientId ||
          q.get('code_challenge_method') !== 'S256' ||
          !q.get('code_challenge') ||
          !q.get('redirect_uri')
        )
          return json(res, 400, { error: 'invalid_request' });
        if (!idp.interactive) return answerAuthorization(res, q);
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end(
          `<!doctype html><html><head><title>${kind} sign-in</title></head><body><h1>Sign in with ${kind}</h1><p>${escape(idp.user.email ?? idp.user.sub)}</p><form method="post" action="/authorize/approve">${[...q].map(([k, v]) => `<input type="hidden" name="${k}" value="${escape(v)}">`).join('')}<button type="submit">Continue</button></form></body></html>`,
        );
      }
      if (u.pathname === '/authorize/approve' && req.method === 'POST')
        return answerAuthorization(res, await readForm(req));
      if (u.pathname === '/token' && req.method === 'POST') {
        const f = await readForm(req);
        const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
        const [basicId, basicSecret] = basic
          ? Buffer.from(basic[1]!, 'base64').toString().split(':').map(decodeURIComponent)
          : [];
        const clientId = f.get('client_id') ?? basicId;
        const secret = f.get('client_secret') ?? basicSecret ?? null;
        const clientOk =
          clientId === idp.clientId && (kind === 'apple' ? appleClientOk(secret) : secret === idp.clientSecret);
        if (!clientOk) return json(res, 401, { error: 'invalid_client' });
        const code = codes.get(f.get('code') ?? '');
        codes.delete(f.get('code') ?? '');
        if (!code || code.redirectUri !== f.get('redirect_uri')) return json(res, 400, { error: 'invalid_grant' });
        const challenge = createHash('sha256')
          .update(f.get('code_verifier') ?? '')
          .digest('base64url');
        if (challenge !== code.challenge) return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE' });
        idp.redeemedCodes += 1;
        const accessToken = randomBytes(16).toString('hex');
        tokens.set(accessToken, true);
        return json(res, 200, {
          access_token: accessToken,
          token_type: 'bearer',
          expires_in: 3600,
          ...(kind === 'github' ? { scope: 'read:user,user:email' } : { id_token: idToken(code.nonce) }),
        });
      }
      if (kind === 'github' && (u.pathname === '/user' || u.pathname === '/user/emails')) {
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        if (!token || !tokens.has(token)) return json(res, 401, { message: 'Bad credentials' });
        if (u.pathname === '/user')
          return json(res, 200, { id: Number(idp.user.sub), login: 'octo', name: idp.user.name ?? null });
        return json(res, 200, idp.githubEmails);
      }
      json(res, 404, { error: 'not_found' });
    })().catch((err: unknown) => json(res, 500, { error: String(err) }));
  });
  return idp;
}

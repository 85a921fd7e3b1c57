// A real OpenID Provider for interoperability tests: the `oidc-provider` package on 127.0.0.1 on a
// random port, with one confidential client and one account, and its development interactions
// (a login form that takes any password, then a consent form). `UserAgent` plays the browser with
// plain HTTP: manual redirects and a cookie jar, so each hop can be asserted.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The little of oidc-provider's API used here (the package ships no type declarations). */
interface ProviderInstance {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
}
type ProviderClass = new (issuer: string, configuration: Record<string, unknown>) => ProviderInstance;

export interface OidcAccount {
  sub: string;
  email: string;
  email_verified: boolean;
  name?: string;
}

export interface OidcProviderOptions {
  clientId: string;
  clientSecret: string;
  /** Read when the provider answers its first request, so the relying party may start after it. */
  redirectUri: () => string;
  account: OidcAccount;
  /** The client's token endpoint authentication, as registered at the provider. */
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post';
  /**
   * oidc-provider's default (true) puts scope-requested claims such as `email` only in the
   * userinfo answer when an access token is issued (OIDC Core §5.4); Google puts them in the ID
   * token as well, which false reproduces.
   */
  conformIdTokenClaims?: boolean;
}

export interface TokenRequest {
  /** 'success', or the error's name and description. */
  outcome: string;
  /** How the client authenticated: the Authorization header or the body. */
  clientAuth: 'client_secret_basic' | 'client_secret_post' | 'none';
  grantType: string;
  codeVerifier: boolean;
}

export interface OidcProvider {
  issuer: string;
  /** Token endpoint requests, in order. */
  tokenRequests: TokenRequest[];
  /** Accounts the provider looked up (each sign-in, each token issued). */
  accountLookups: string[];
  close(): Promise<void>;
}

export async function startOidcProvider(options: OidcProviderOptions): Promise<OidcProvider> {
  // Loaded by a computed name: without type declarations a literal import would be an implicit any.
  const specifier: string = 'oidc-provider';
  const { default: Provider } = (await import(specifier)) as { default: ProviderClass };

  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server = createServer((req, res) => {
    handler ??= build();
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'interop-rs256', alg: 'RS256', use: 'sig' };
  const tokenRequests: TokenRequest[] = [];
  const accountLookups: string[] = [];
  const { account } = options;

  const build = () => {
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: options.clientId,
          client_secret: options.clientSecret,
          redirect_uris: [options.redirectUri()],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: options.tokenEndpointAuthMethod ?? 'client_secret_basic',
        },
      ],
      jwks: { keys: [jwk] },
      cookies: { keys: [randomBytes(32).toString('hex')] },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
      conformIdTokenClaims: options.conformIdTokenClaims ?? true,
      pkce: { required: () => true },
      // Short, explicit lifetimes (the defaults also print a notice per kind).
      ttl: { AccessToken: 300, AuthorizationCode: 60, Grant: 600, IdToken: 300, Interaction: 600, Session: 600 },
      features: { devInteractions: { enabled: true } },
      findAccount: (_ctx: unknown, sub: string) => {
        accountLookups.push(sub);
        if (sub !== account.sub) return undefined;
        return { accountId: sub, claims: () => ({ ...account }) };
      },
    });
    const seen = (ctx: unknown, outcome: string): TokenRequest => {
      const c = ctx as { headers: Record<string, string | undefined>; oidc?: { params?: Record<string, unknown> } };
      const params = c.oidc?.params ?? {};
      const clientAuth = c.headers.authorization?.startsWith('Basic ')
        ? 'client_secret_basic'
        : params.client_secret
          ? 'client_secret_post'
          : 'none';
      return {
        outcome,
        clientAuth,
        grantType: String(params.grant_type),
        codeVerifier: typeof params.code_verifier === 'string',
      };
    };
    provider.on('grant.success', (ctx) => tokenRequests.push(seen(ctx, 'success')));
    provider.on('grant.error', (ctx, err) => {
      const e = err as { name?: string; error_description?: string };
      tokenRequests.push(seen(ctx, `${e.name ?? 'error'}: ${e.error_description ?? ''}`));
    });
    return provider.callback();
  };

  return {
    issuer,
    tokenRequests,
    accountLookups,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A browser reduced to what an authorization code flow needs: cookies and manual redirects. */
export class UserAgent {
  private readonly jar = new Map<string, Map<string, string>>();

  async get(url: string): Promise<Response> {
    return this.send(url, { method: 'GET' });
  }

  async postForm(url: string, form: Record<string, string>): Promise<Response> {
    return this.send(url, {
      method: 'POST',
      body: new URLSearchParams(form),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
  }

  /** Cookie names the agent holds for an origin. */
  cookieNames(origin: string): string[] {
    return [...(this.jar.get(origin)?.keys() ?? [])];
  }

  private async send(url: string, init: RequestInit): Promise<Response> {
    const { origin } = new URL(url);
    const cookies = this.jar.get(origin) ?? new Map<string, string>();
    const headers = new Headers(init.headers);
    if (cookies.size > 0) headers.set('cookie', [...cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired =
        attributes.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now()) ||
        attributes.some((a) => /^\s*max-age=(0|-)/i.test(a));
      if (expired || value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
    this.jar.set(origin, cookies);
    return res;
  }
}

/** Where a redirect answer points, resolved against the request's URL. */
export function locationOf(res: Response, base: string): URL {
  const location = res.headers.get('location');
  if (!location) throw new Error(`expected a redirect, got ${res.status}`);
  return new URL(location, base);
}

export interface HtmlForm {
  action: string;
  method: string;
  fields: Record<string, string>;
}

/** The first form of a page: its action (absolute), method and named inputs with their values. */
export function readForm(html: string, base: string): HtmlForm {
  const form = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) throw new Error(`no form in the page: ${html.slice(0, 300)}`);
  const attr = (tag: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`, 'i').exec(tag)?.[1];
  const unescape = (s: string) =>
    s
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  const fields: Record<string, string> = {};
  for (const m of form[2]!.matchAll(/<input\b[^>]*>/gi)) {
    const name = attr(m[0], 'name');
    if (name) fields[unescape(name)] = unescape(attr(m[0], 'value') ?? '');
  }
  return {
    action: new URL(unescape(attr(form[1]!, 'action') ?? ''), base).toString(),
    method: (attr(form[1]!, 'method') ?? 'get').toLowerCase(),
    fields,
  };
}

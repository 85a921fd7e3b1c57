// The relying party, with openid-client: discovery, PKCE S256, state and nonce checks, and ID
// token validation (iss, aud, exp, nonce, and the signature against the provider's JWKS: we turn
// on openid-client's non-repudiation checks so a token is never trusted for arriving over TLS
// alone). The `iss` authorization response parameter is checked where the provider announces it
// (RFC 9207). GitHub is plain OAuth 2, so its identity comes from its REST API instead.
import * as oidc from 'openid-client';
import { AppError } from '../../app-error.ts';
import { appleClientSecret } from './apple.ts';
import { egressRefusal } from './egress.ts';
import type { ResolvedProvider } from './providers.ts';

const metadataCache = new Map<string, { at: number; metadata: oidc.ServerMetadata }>();
const metadataSeconds = 600;

/** Plain http only for addresses an operator or a test set up deliberately (never a default). */
const insecureOk = (p: ResolvedProvider) =>
  [p.issuer, p.authorizationEndpoint, p.tokenEndpoint].some((u) => u?.startsWith('http://'));

async function serverMetadata(p: ResolvedProvider): Promise<oidc.ServerMetadata> {
  if (p.kind === 'github') {
    return { issuer: p.issuer, authorization_endpoint: p.authorizationEndpoint!, token_endpoint: p.tokenEndpoint! };
  }
  const cached = metadataCache.get(p.issuer);
  if (cached && Date.now() - cached.at < metadataSeconds * 1000) return cached.metadata;
  try {
    const found = await oidc.discovery(new URL(p.issuer), p.clientId, undefined, oidc.None(), {
      ...(insecureOk(p) ? { execute: [oidc.allowInsecureRequests] } : {}),
      ...(p.fetch ? { [oidc.customFetch]: p.fetch } : {}),
    });
    const metadata = found.serverMetadata();
    metadataCache.set(p.issuer, { at: Date.now(), metadata });
    return metadata;
  } catch (err) {
    const refusal = egressRefusal(err);
    if (refusal) throw endpointRefused(p, refusal);
    throw new AppError('store_unavailable', `could not reach ${p.name}'s sign-in service; retry shortly`, {
      retryAfter: 5,
      cause: err,
    });
  }
}

/**
 * The provider's settings name an address this environment may not reach. The refusal's text names
 * no host, and reads the same for a name that did not resolve (egress/addresses.ts hostRefused), so
 * sign-ins cannot map the service's internal names either.
 */
function endpointRefused(p: ResolvedProvider, refusal: Error): AppError {
  return new AppError(
    'invalid_request',
    `${p.name} sign-in could not reach its provider: ${refusal.message} (${p.refusedBecause ?? 'public addresses only'}); check the provider's settings`,
    { details: { reason: 'endpoint_not_allowed' } },
  );
}

function clientAuth(p: ResolvedProvider): oidc.ClientAuth {
  if (p.apple)
    return oidc.ClientSecretPost(appleClientSecret({ ...p.apple, clientId: p.clientId, audience: p.issuer }));
  return oidc.ClientSecretPost(p.clientSecret);
}

export async function rpConfiguration(p: ResolvedProvider): Promise<oidc.Configuration> {
  const config = new oidc.Configuration(await serverMetadata(p), p.clientId, undefined, clientAuth(p));
  if (insecureOk(p)) oidc.allowInsecureRequests(config);
  if (p.fetch) config[oidc.customFetch] = p.fetch;
  if (p.kind === 'oidc') oidc.enableNonRepudiationChecks(config);
  return config;
}

export interface AuthorizationParams {
  redirectUri: string;
  state: string;
  nonce: string;
  codeChallenge: string;
}

export async function authorizationUrl(p: ResolvedProvider, a: AuthorizationParams): Promise<string> {
  const config = await rpConfiguration(p);
  const params: Record<string, string> = {
    redirect_uri: a.redirectUri,
    state: a.state,
    code_challenge: a.codeChallenge,
    code_challenge_method: 'S256',
    response_type: 'code',
  };
  if (p.kind === 'github') params.scope = 'read:user user:email';
  else {
    params.nonce = a.nonce;
    // Apple sends the name and email only with form_post (and the name only the first time).
    params.scope = p.name === 'apple' ? 'openid name email' : 'openid email profile';
    if (p.name === 'apple') params.response_mode = 'form_post';
  }
  return oidc.buildAuthorizationUrl(config, params).toString();
}

export interface ProviderProfile {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
}

interface GitHubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

async function githubProfile(p: ResolvedProvider, accessToken: string): Promise<ProviderProfile> {
  const get = async (path: string): Promise<unknown> => {
    let res: Response;
    try {
      res = await (p.fetch ?? fetch)(`${p.apiBaseUrl}${path}`, {
        headers: {
          authorization: `Bearer ${accessToken}`,
          accept: 'application/vnd.github+json',
          'user-agent': 'cairn',
          'x-github-api-version': '2022-11-28',
        },
        signal: AbortSignal.timeout(10_000),
      });
    } catch (err) {
      const refusal = egressRefusal(err);
      if (refusal) throw endpointRefused(p, refusal);
      throw new AppError('unauthorized', `could not reach GitHub for ${path}`, { cause: err });
    }
    if (!res.ok) throw new AppError('unauthorized', `GitHub answered ${res.status} for ${path}`);
    try {
      return await res.json();
    } catch (err) {
      throw new AppError('unauthorized', `GitHub's answer for ${path} was not valid JSON`, { cause: err });
    }
  };
  const user = (await get('/user')) as { id?: unknown; name?: unknown; login?: unknown };
  if (typeof user.id !== 'number' && typeof user.id !== 'string')
    throw new AppError('unauthorized', 'GitHub returned no user id');
  const emails = ((await get('/user/emails')) as GitHubEmail[]).filter((e) => typeof e?.email === 'string');
  // Only an address GitHub says is verified may link to an existing account.
  const chosen =
    emails.find((e) => e.primary && e.verified) ?? emails.find((e) => e.verified) ?? emails.find((e) => e.primary);
  return {
    subject: String(user.id),
    email: chosen?.email ?? null,
    emailVerified: chosen?.verified === true,
    name: typeof user.name === 'string' ? user.name : typeof user.login === 'string' ? user.login : null,
  };
}

/** Apple sends the user's name once, as JSON in the `user` form field of the first sign-in. */
function appleName(userField: string | undefined): string | null {
  if (!userField) return null;
  try {
    const u = JSON.parse(userField) as { name?: { firstName?: unknown; lastName?: unknown } };
    const parts = [u.name?.firstName, u.name?.lastName].filter(
      (x): x is string => typeof x === 'string' && x.length > 0,
    );
    return parts.length > 0 ? parts.join(' ').slice(0, 200) : null;
  } catch {
    return null;
  }
}

export interface Checks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** Exchanges the code (every check above) and answers who the provider says the user is. */
export async function redeemCode(
  p: ResolvedProvider,
  callbackUrl: URL,
  checks: Checks,
  appleUser?: string,
): Promise<ProviderProfile> {
  const config = await rpConfiguration(p);
  let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
  try {
    tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: checks.codeVerifier,
      expectedState: checks.state,
      ...(p.kind === 'oidc' ? { expectedNonce: checks.nonce, idTokenExpected: true } : {}),
    });
  } catch (err) {
    throw new AppError(
      'unauthorized',
      `${p.name} sign-in was refused: ${err instanceof Error ? err.message : 'invalid response'}`,
      { cause: err },
    );
  }
  if (p.kind === 'github') return githubProfile(p, tokens.access_token);
  const idClaims = tokens.claims();
  if (!idClaims) throw new AppError('unauthorized', 'the provider returned no ID token');
  // OIDC Core §5.4: with an access token, a provider may return the email and profile claims only
  // from the UserInfo endpoint (Google and Apple put them in the ID token; others don't). The
  // subject must match the ID token's (§5.3.2), which fetchUserInfo checks.
  let claims: Record<string, unknown> = idClaims;
  if (typeof idClaims.email !== 'string' && config.serverMetadata().userinfo_endpoint) {
    try {
      claims = { ...(await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub)), ...idClaims };
    } catch (err) {
      throw new AppError('unauthorized', `${p.name} sign-in was refused: the UserInfo answer was not valid`, {
        cause: err,
      });
    }
  }
  const verified = claims.email_verified === true || claims.email_verified === 'true'; // Apple sends a string
  const name = typeof claims.name === 'string' ? claims.name : appleName(appleUser);
  return {
    subject: idClaims.sub,
    email: typeof claims.email === 'string' ? claims.email : null,
    emailVerified: verified,
    name,
  };
}

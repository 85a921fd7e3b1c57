// The three providers and how an environment configures them. Google may run on the
// service's shared client (CAIRN_GOOGLE_CLIENT_ID/SECRET: nothing to set up) or the caller's own;
// GitHub (OAuth 2 plus its REST API, no OIDC) and Apple (OIDC, ES256 client-secret JWT,
// form_post) only on the caller's own. Secrets are sealed with the service key, bound to the
// environment and provider, and never read back through the API.
import type { z } from 'zod';
import type { Config } from '../../config.ts';
import { keyringFromConfig, open, seal } from '../../crypto.ts';
import type { Db } from '../../db.ts';
import { AppError } from '../../app-error.ts';
import { envIdentity } from '../identity/sessions/sessions.ts';
import type { EnvMode } from '../tenancy/keys.ts';
import { checkApplePrivateKey } from './apple.ts';
import { targetRule } from '../../egress/target-rule.ts';
import { checkEndpoint, guardedFetch, isPublicAddress, type EgressFetch } from './egress.ts';
import { socialQueries, type ProviderName, type ProviderRow } from './queries.ts';
import { providerInput } from '../../contract/social.ts';

export const providerLabels: Record<ProviderName, string> = { google: 'Google', github: 'GitHub', apple: 'Apple' };

const defaults = {
  google: { issuer: 'https://accounts.google.com' },
  apple: { issuer: 'https://appleid.apple.com' },
  github: {
    issuer: 'https://github.com',
    authorization_endpoint: 'https://github.com/login/oauth/authorize',
    token_endpoint: 'https://github.com/login/oauth/access_token',
    api_base_url: 'https://api.github.com',
  },
} as const;

export type ProviderInput = z.infer<typeof providerInput>;

const sealContext = (envId: string, provider: string, what: string) => `social:${envId}:${provider}:${what}`;

/** Validates and stores an environment's provider settings; secrets are sealed. */
export async function putProvider(
  db: Db,
  config: Config,
  envId: string,
  provider: ProviderName,
  input: ProviderInput,
): Promise<void> {
  const own = input.client_id !== undefined;
  const overrides = input.issuer ?? input.authorization_endpoint ?? input.token_endpoint ?? input.api_base_url;
  if (!own) {
    if (provider !== 'google')
      throw new AppError(
        'invalid_request',
        `${providerLabels[provider]} needs your own client: set client_id (the service has no shared ${providerLabels[provider]} client)`,
      );
    if (!config.CAIRN_GOOGLE_CLIENT_ID || !config.CAIRN_GOOGLE_CLIENT_SECRET)
      throw new AppError(
        'invalid_request',
        'this service has no shared Google client (CAIRN_GOOGLE_CLIENT_ID); set your own client_id and client_secret',
      );
    // The shared client's secret must only ever be sent to Google itself.
    if (overrides || input.client_secret)
      throw new AppError(
        'invalid_request',
        'the shared Google client cannot take a client_secret or other endpoints; set your own client_id to change them',
      );
  }
  // OpenID providers publish their endpoints in discovery (OpenID Connect Discovery 1.0 §4): only
  // the issuer is set for them. Explicit endpoints are for GitHub, which has no discovery.
  if (provider !== 'github' && (input.authorization_endpoint || input.token_endpoint || input.api_base_url)) {
    throw new AppError(
      'invalid_request',
      `${providerLabels[provider]} is an OpenID provider: set its issuer; its endpoints come from the issuer's discovery document`,
    );
  }
  if (provider === 'apple') {
    if (!input.apple)
      throw new AppError(
        'invalid_request',
        'Apple needs apple.team_id, apple.key_id and apple.private_key (the .p8 key) to sign its client secret',
      );
    checkApplePrivateKey(input.apple.private_key);
  } else if (input.apple) {
    throw new AppError('invalid_request', 'apple settings belong to the apple provider only');
  }
  if (own && provider !== 'apple' && !input.client_secret)
    throw new AppError('invalid_request', 'client_secret is required with your own client_id');
  const rule = targetRule(config, (await envIdentity(db, envId)).mode);
  if (rule.publicOnly) {
    for (const field of ['issuer', 'authorization_endpoint', 'token_endpoint', 'api_base_url'] as const) {
      const url = input[field];
      if (url) await checkEndpoint(field, url, rule);
    }
  }
  const keyring = keyringFromConfig(config);
  await socialQueries(db).putProvider({
    env_id: envId,
    provider,
    enabled: input.enabled,
    client_id: input.client_id ?? null,
    client_secret_sealed: input.client_secret
      ? seal(keyring, input.client_secret, sealContext(envId, provider, 'secret'))
      : null,
    apple_team_id: input.apple?.team_id ?? null,
    apple_key_id: input.apple?.key_id ?? null,
    apple_private_key_sealed: input.apple
      ? seal(keyring, input.apple.private_key, sealContext(envId, provider, 'apple_key'))
      : null,
    issuer: input.issuer ?? null,
    authorization_endpoint: input.authorization_endpoint ?? null,
    token_endpoint: input.token_endpoint ?? null,
    api_base_url: input.api_base_url ?? null,
  });
}

/** Everything the flow needs to talk to one provider for one environment. */
export interface ResolvedProvider {
  name: ProviderName;
  kind: 'oidc' | 'github';
  issuer: string;
  clientId: string;
  /** Static secret (Google, GitHub). */
  clientSecret?: string;
  apple?: { teamId: string; keyId: string; privateKeyPem: string };
  authorizationEndpoint?: string;
  tokenEndpoint?: string;
  apiBaseUrl?: string;
  /** Where the environment's rule admits public addresses only (egress/target-rule.ts): a fetch that keeps to it (egress.ts). */
  fetch?: EgressFetch;
  /** That rule's reason, for the message when a request was refused. */
  refusedBecause?: string;
}

export function resolveProvider(config: Config, row: ProviderRow, mode: EnvMode): ResolvedProvider {
  const keyring = keyringFromConfig(config);
  const unseal = (sealed: string, what: string) =>
    open(keyring, sealed, sealContext(row.env_id, row.provider, what)).toString();
  if (row.client_id === null) {
    if (!config.CAIRN_GOOGLE_CLIENT_ID || !config.CAIRN_GOOGLE_CLIENT_SECRET)
      throw new AppError('invalid_request', 'Google sign-in is not available: the service has no shared Google client');
    return {
      name: 'google',
      kind: 'oidc',
      issuer: config.CAIRN_GOOGLE_ISSUER,
      clientId: config.CAIRN_GOOGLE_CLIENT_ID,
      clientSecret: config.CAIRN_GOOGLE_CLIENT_SECRET,
    };
  }
  // The service's shared Google client is the operator's configuration; an environment's own
  // client names addresses its key holder chose, reached only as the environment's rule allows.
  const rule = targetRule(config, mode);
  const base = {
    name: row.provider,
    clientId: row.client_id,
    ...(row.client_secret_sealed ? { clientSecret: unseal(row.client_secret_sealed, 'secret') } : {}),
    ...(rule.publicOnly
      ? { fetch: guardedFetch(isPublicAddress, { httpsOnly: rule.httpsOnly }), refusedBecause: rule.because }
      : {}),
  };
  if (row.provider === 'github') {
    const d = defaults.github;
    return {
      ...base,
      kind: 'github',
      issuer: row.issuer ?? d.issuer,
      authorizationEndpoint: row.authorization_endpoint ?? d.authorization_endpoint,
      tokenEndpoint: row.token_endpoint ?? d.token_endpoint,
      apiBaseUrl: (row.api_base_url ?? d.api_base_url).replace(/\/$/, ''),
    };
  }
  return {
    ...base,
    kind: 'oidc',
    issuer: row.issuer ?? defaults[row.provider].issuer,
    ...(row.provider === 'apple' && row.apple_private_key_sealed
      ? {
          apple: {
            teamId: row.apple_team_id!,
            keyId: row.apple_key_id!,
            privateKeyPem: unseal(row.apple_private_key_sealed, 'apple_key'),
          },
        }
      : {}),
  };
}

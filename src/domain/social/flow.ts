// Social sign-in from start to callback. The start keeps a one-use transaction,
// keyed by SHA-256 of `state` and bound to one provider and environment, so a response can only
// complete the flow it belongs to (RFC 9700 §4.4, mix-up) and a replayed state finds nothing.
// Nothing depends on cookies: Apple's form_post arrives cross-site, where SameSite=Lax cookies
// are not sent. The callback links the provider identity to an end user and then behaves like
// password sign-in: a ticket on redirect_url (server mode) or the bearer in its fragment (browser).
import * as oidc from 'openid-client';
import type { Knex } from 'knex';
import type { Config } from '../../config.ts';
import { keyringFromConfig, open, seal, sha256 } from '../../crypto.ts';
import { AppError } from '../../app-error.ts';
import type { AnyJobs as Jobs } from '../../jobs/index.ts';
import { allowedRedirect, isPortalPage } from '../identity/redirects.ts';
import { createSession, envIdentity, type SignInContext } from '../identity/sessions/sessions.ts';
import { issueTicket } from '../identity/tickets/tickets.ts';
import { linkIdentity } from './linking.ts';
import { resolveProvider } from './providers.ts';
import { socialQueries, type ProviderName, type TransactionRow } from './queries.ts';
import { authorizationUrl, redeemCode } from './rp.ts';

export const transactionSeconds = 600;

export const callbackUrl = (config: Config) => `${config.CAIRN_BASE_URL}/v1/oidc/callback`;

const verifierContext = (stateHash: Buffer) => `social-pkce:${stateHash.toString('hex')}`;

export async function startSocialSignIn(
  db: Knex,
  config: Config,
  input: { envId: string; provider: ProviderName; redirectUrl: string; sessionMode: 'server' | 'browser' },
): Promise<string> {
  const env = await envIdentity(db, input.envId);
  const row = await socialQueries(db).provider(input.envId, input.provider);
  if (!row?.enabled) throw new AppError('not_found', `${input.provider} sign-in is not enabled for this environment`);
  const redirectUrl = allowedRedirect(config, env, input.redirectUrl);
  const provider = resolveProvider(config, row, env.mode);
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const verifier = oidc.randomPKCECodeVerifier();
  const stateHash = sha256(state);
  await socialQueries(db).insertTransaction({
    state_hash: stateHash,
    env_id: input.envId,
    provider: input.provider,
    nonce,
    code_verifier_sealed: seal(keyringFromConfig(config), verifier, verifierContext(stateHash)),
    redirect_url: redirectUrl,
    session_mode: input.sessionMode,
    lifetime_seconds: transactionSeconds,
  });
  return authorizationUrl(provider, {
    redirectUri: callbackUrl(config),
    state,
    nonce,
    codeChallenge: await oidc.calculatePKCECodeChallenge(verifier),
  });
}

export type CallbackOutcome =
  | { kind: 'redirect'; url: string }
  /** The Account Portal asked: it keeps the session in its own cookie. */
  | { kind: 'portal'; url: string; envId: string; sessionToken: string };

function withError(url: string, error: string, description: string): CallbackOutcome {
  const u = new URL(url);
  u.searchParams.set('error', error);
  u.searchParams.set('error_description', description);
  return { kind: 'redirect', url: u.toString() };
}

/** The callback: params come from the query (GET) or the form (Apple's form_post). */
export async function completeSocialSignIn(
  { db, config, jobs }: { db: Knex; config: Config; jobs: Jobs },
  params: Record<string, string>,
  from: SignInContext,
): Promise<CallbackOutcome> {
  const state = params.state;
  const tx: TransactionRow | undefined = state ? await socialQueries(db).takeTransaction(sha256(state)) : undefined;
  if (!state || !tx)
    throw new AppError('invalid_request', 'this sign-in is unknown, expired or already completed; start again', {
      details: { reason: 'invalid_state' },
    });
  if (params.error)
    return withError(
      tx.redirect_url,
      params.error === 'access_denied' ? 'access_denied' : 'sign_in_failed',
      `the provider answered ${params.error.slice(0, 100)}`,
    );
  const row = await socialQueries(db).provider(tx.env_id, tx.provider);
  if (!row?.enabled) return withError(tx.redirect_url, 'sign_in_failed', `${tx.provider} sign-in is no longer enabled`);
  const url = new URL(callbackUrl(config));
  for (const [k, v] of Object.entries(params)) if (k !== 'user') url.searchParams.set(k, v);
  let userId: string;
  try {
    const profile = await redeemCode(
      resolveProvider(config, row, (await envIdentity(db, tx.env_id)).mode),
      url,
      {
        state,
        nonce: tx.nonce,
        codeVerifier: open(
          keyringFromConfig(config),
          tx.code_verifier_sealed,
          verifierContext(sha256(state)),
        ).toString(),
      },
      params.user,
    );
    userId = await linkIdentity({ db, jobs }, tx.env_id, tx.provider, profile);
  } catch (err) {
    if (!(err instanceof AppError) || err.code === 'internal') throw err;
    const reason = (err.details?.reason as string | undefined) ?? 'sign_in_failed';
    return withError(tx.redirect_url, reason, err.message);
  }
  const method = `oauth_${tx.provider}`;
  if (isPortalPage(config, tx.redirect_url)) {
    const { token } = await createSession(db, await envIdentity(db, tx.env_id), userId, method, from);
    return { kind: 'portal', url: tx.redirect_url, envId: tx.env_id, sessionToken: token };
  }
  const target = new URL(tx.redirect_url);
  if (tx.session_mode === 'server') {
    target.searchParams.set('auth_ticket', (await issueTicket(db, tx.env_id, userId, method, from)).ticket);
  } else {
    // Never in the query: a fragment is not sent to servers or in Referer headers (docs/api.md).
    const { session, token } = await createSession(db, await envIdentity(db, tx.env_id), userId, method, from);
    target.hash = new URLSearchParams({ session_token: token, session_id: session.id }).toString();
  }
  return { kind: 'redirect', url: target.toString() };
}

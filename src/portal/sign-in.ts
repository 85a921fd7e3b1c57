// Password sign-in on the portal, with the TOTP step. Between the two steps the portal must
// remember who is signing in without a server-side row: the identifier and password travel in
// a hidden field sealed with the service key (AES-256-GCM, bound to its purpose), valid five
// minutes, so the browser only ever holds ciphertext and the second step re-runs the full check.
import type { Context } from 'koa';
import type { AppDeps } from '../http/context.ts';
import { clientFrom } from '../http/client.ts';
import { signInWithPassword } from '../domain/identity/signin.ts';
import type { EnvIdentity } from '../domain/identity/sessions/sessions.ts';
import type { FactorProof } from '../domain/identity/factors/totp.ts';
import { allowedRedirect, isPortalPage } from '../domain/identity/redirects.ts';
import { keyringFromConfig, open, seal } from '../crypto.ts';
import { AppError } from '../app-error.ts';
import { setPortalSession } from '../http/cookies.ts';

const stateSeconds = 300;
const stateContext = 'portal-mfa';

export interface PendingSignIn {
  env: string;
  email: string;
  password: string;
  redirect_url?: string | undefined;
  exp: number;
}

export function sealPending(deps: AppDeps, p: Omit<PendingSignIn, 'exp'>): string {
  return seal(
    keyringFromConfig(deps.config),
    JSON.stringify({ ...p, exp: Date.now() + stateSeconds * 1000 }),
    stateContext,
  );
}

export function openPending(deps: AppDeps, sealed: string | undefined): PendingSignIn {
  const expired = new AppError('unauthorized', 'That took too long; sign in again.');
  if (!sealed) throw expired;
  let p: PendingSignIn;
  try {
    p = JSON.parse(open(keyringFromConfig(deps.config), sealed, stateContext).toString()) as PendingSignIn;
  } catch {
    throw expired;
  }
  if (p.exp < Date.now()) throw expired;
  return p;
}

/** A target the environment allows (redirects.ts), or nothing (the portal's own page). */
export function checkTarget(deps: AppDeps, env: EnvIdentity, url: string | undefined): string | undefined {
  return url ? allowedRedirect(deps.config, env, url) : undefined;
}

export function proofOf(code: string): FactorProof {
  const trimmed = code.trim();
  return /^\d{6}$/.test(trimmed)
    ? { type: 'totp', code: trimmed }
    : { type: 'recovery_code', code: trimmed.slice(0, 64) };
}

/**
 * Runs the sign-in and answers where to send the browser: the app's redirect_url with a ticket
 * (server mode: no bearer ever reaches page script), or a portal page with the portal cookie set.
 */
export async function portalSignIn(
  ctx: Context,
  deps: AppDeps,
  env: EnvIdentity,
  p: { email: string; password: string; redirectUrl?: string | undefined; proofs: FactorProof[] },
): Promise<string> {
  const toApp = p.redirectUrl !== undefined && !isPortalPage(deps.config, p.redirectUrl);
  const result = await signInWithPassword(deps, {
    envId: env.envId,
    identifier: p.email,
    password: p.password,
    sessionMode: toApp ? 'server' : 'browser',
    factorProofs: p.proofs,
    from: clientFrom(ctx),
  });
  if (result.mode === 'server') {
    const target = new URL(p.redirectUrl!);
    target.searchParams.set('auth_ticket', result.ticket);
    return target.toString();
  }
  setPortalSession(ctx, deps.config, result.token);
  return p.redirectUrl ?? `${deps.config.CAIRN_BASE_URL}/signed-in?env=${env.envId}`;
}

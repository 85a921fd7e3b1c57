// What a portal request knows: the environment (from a publishable key, an env id carried by
// the portal's own forms, or a device request), the signed-in end user of that environment if
// any, and how to answer a page with the portal's security headers.
import type { Context } from 'koa';
import type { AppDeps } from '../http/context.ts';
import { resolveSession } from '../domain/identity/sessions/sessions.ts';
import type { EndUserRow } from '../domain/identity/users/queries.ts';
import { envIdentity, type EnvIdentity } from '../domain/identity/sessions/sessions.ts';
import { hashKey, parseKey } from '../domain/tenancy/keys.ts';
import { tenancyQueries } from '../domain/tenancy/queries.ts';
import { AppError } from '../app-error.ts';
import { sessionCookie } from '../http/cookies.ts';
import { pageHeaders } from '../http/page-headers.ts';
import type { Html } from '../html/html.ts';
import { brandOf, page } from './layout.ts';

export async function envFromPublishableKey(deps: AppDeps, key: string | undefined): Promise<EnvIdentity> {
  const shape = key ? parseKey(key) : null;
  const row = shape?.kind === 'publishable' ? await tenancyQueries(deps.db).resolveKey(hashKey(key!)) : undefined;
  if (!row || row.kind !== 'publishable' || row.revoke_time)
    throw new AppError('not_found', 'This sign-in link is not valid. Go back to the application and try again.');
  return envIdentity(deps.db, row.env_id);
}

export async function envFromId(deps: AppDeps, id: string | undefined): Promise<EnvIdentity> {
  if (!id || !/^env_[0-9a-z]{26}$/.test(id))
    throw new AppError(
      'not_found',
      'This page was opened without its application. Go back to the application and try again.',
    );
  return envIdentity(deps.db, id);
}

/** The portal session's user, when it belongs to this environment and is live. */
export async function portalUser(ctx: Context, deps: AppDeps, envId: string): Promise<EndUserRow | undefined> {
  const token = ctx.cookies.get(sessionCookie);
  const resolved = token ? await resolveSession(deps.db, token) : undefined;
  return resolved && resolved.session.env_id === envId ? resolved.user : undefined;
}

export interface RenderOptions {
  title: string;
  body: Html;
  env?: EnvIdentity | undefined;
  status?: number;
  /** Origins a form on this page may end up at (after the portal's 303), for CSP form-action. */
  formTargets?: string[];
}

export function render(ctx: Context, o: RenderOptions): void {
  const nonce = pageHeaders(ctx, { formTargets: o.formTargets });
  ctx.status = o.status ?? 200;
  ctx.type = 'text/html; charset=utf-8';
  const brand = brandOf(
    o.env?.settings,
    o.env ? (o.env.settings.branding.name ?? o.env.envName.split('/')[3] ?? 'Sign in') : 'Account',
  );
  ctx.body = page({ title: o.title, brand, nonce, body: o.body });
}

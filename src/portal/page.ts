// What the Account Portal's pages share: their declaration on the route kernel (no key, HTML
// answers, errors as pages, form bodies), lenient query and form fields, and the sign-in and
// device pages that several endpoints show. Plain HTML forms: no JavaScript needed. Every POST is
// CSRF-checked (src/http/csrf.ts); every page forbids framing (CSP frame-ancestors 'none',
// X-Frame-Options, context.ts `render`).
import type { Context } from 'koa';
import type { EnvIdentity } from '../domain/identity/sessions/sessions.ts';
import { findDeviceRequest } from '../domain/oauth/device.ts';
import { formatUserCode } from '../domain/oauth/user-code.ts';
import { providerLabels } from '../domain/social/providers.ts';
import { socialQueries } from '../domain/social/queries.ts';
import { AppError } from '../app-error.ts';
import { clientFrom } from '../http/client.ts';
import type { AppDeps } from '../http/context.ts';
import { browserId, csrfToken } from '../http/csrf.ts';
import type { PageErrors } from '../http/route.ts';
import { pageRoute } from '../html/page-route.ts';
import { envFromId, envFromPublishableKey, portalUser, render } from './context.ts';
import * as v from './views.ts';

/** Any 4xx AppError becomes a page with its status; the message is the user's, not a stack. */
export const pageErrors: PageErrors = {
  page(ctx, err) {
    render(ctx, {
      title: 'Something went wrong',
      body: v.messageView('Something went wrong', err.message),
      status: err.status,
    });
  },
};

/** The declaration every portal endpoint shares: pages answer HTML, and render themselves. */
export const portalPage = { ...pageRoute, tags: ['Account Portal'], auth: 'none', errors: pageErrors } as const;

/** The origin of a redirect target outside the portal, for CSP form-action. */
export const originOf = (deps: AppDeps, url: string | undefined): string[] =>
  url && !url.startsWith(`${deps.config.CAIRN_BASE_URL}/`) ? [new URL(url).origin] : [];

/** The environment of a page opened with a publishable key or an env id. */
export const envOf = (deps: AppDeps, q: { publishable_key?: string | undefined; env?: string | undefined }) =>
  q.publishable_key ? envFromPublishableKey(deps, q.publishable_key) : envFromId(deps, q.env);

async function socialButtons(
  deps: AppDeps,
  env: EnvIdentity,
  redirectUrl: string | undefined,
): Promise<v.SocialButton[]> {
  const target = redirectUrl ?? `${deps.config.CAIRN_BASE_URL}/signed-in?env=${env.envId}`;
  return (await socialQueries(deps.db).providers(env.envId))
    .filter((p) => p.enabled)
    .map((p) => ({
      label: providerLabels[p.provider],
      href: `/social/${p.provider}?${new URLSearchParams({ env: env.envId, redirect_url: target })}`,
    }));
}

export async function showSignIn(
  ctx: Context,
  deps: AppDeps,
  env: EnvIdentity,
  o: {
    redirectUrl?: string | undefined;
    email?: string | undefined;
    error?: string | undefined;
    status?: number;
    notice?: string | undefined;
  },
): Promise<undefined> {
  const signUp = `/sign-up?${new URLSearchParams({ env: env.envId, ...(o.redirectUrl ? { redirect_url: o.redirectUrl } : {}) })}`;
  render(ctx, {
    env,
    title: 'Sign in',
    status: o.status,
    formTargets: originOf(deps, o.redirectUrl),
    body: v.signInView({
      csrf: csrfToken(ctx, deps.config),
      env: env.envId,
      redirectUrl: o.redirectUrl,
      email: o.email,
      error: o.error,
      notice: o.notice,
      social: await socialButtons(deps, env, o.redirectUrl),
      signUpHref: signUp,
    }),
  });
  return undefined;
}

/** /device and /consent: find the request by its code; sign in if needed; then allow or deny. */
export async function showDevice(ctx: Context, deps: AppDeps, code: string | undefined): Promise<undefined> {
  const browser = browserId(ctx, deps.config);
  if (!code) {
    render(ctx, { title: 'Connect a device', body: v.deviceEntryView({ csrf: csrfToken(ctx, deps.config) }) });
    return undefined;
  }
  let request;
  try {
    request = await findDeviceRequest(deps.db, code, { ip: clientFrom(ctx).ip, browser });
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'not_found') throw err;
    render(ctx, {
      title: 'Connect a device',
      status: 404,
      body: v.deviceEntryView({
        csrf: csrfToken(ctx, deps.config),
        code,
        error: err.message.charAt(0).toUpperCase() + err.message.slice(1) + '.',
      }),
    });
    return undefined;
  }
  const env = await envFromId(deps, request.env_id);
  const here = `${deps.config.CAIRN_BASE_URL}/device?user_code=${formatUserCode(request.user_code)}`;
  const user = await portalUser(ctx, deps, env.envId);
  if (!user)
    return showSignIn(ctx, deps, env, { redirectUrl: here, notice: `Sign in to connect ${request.client_name}.` });
  render(ctx, {
    env,
    title: 'Allow access?',
    body: v.consentView({
      csrf: csrfToken(ctx, deps.config),
      request,
      email: user.email,
      signOutNext: `/device?user_code=${formatUserCode(request.user_code)}`,
    }),
  });
  return undefined;
}

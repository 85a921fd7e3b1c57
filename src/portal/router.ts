// The Account Portal (SPEC.md "Hosted sign-in, consent and device-approval pages"), served by the
// web process outside /v1: /sign-in (password, the TOTP step, social buttons), /sign-up,
// /verify-email, /device and /consent. Plain HTML forms: no JavaScript needed. Every POST is
// CSRF-checked; every page forbids framing (CSP frame-ancestors 'none', X-Frame-Options).
import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { Context, Middleware } from 'koa';
import type { AppDeps } from '../http/context.ts';
import { clientFrom } from '../api/routes/identity/client.ts';
import { minPasswordLength } from '../domain/identity/passwords.ts';
import { acceptSignUp } from '../domain/identity/signup/signup.ts';
import { identityQueries } from '../domain/identity/queries.ts';
import { resolveSession, type EnvIdentity } from '../domain/identity/sessions/sessions.ts';
import { decideDeviceRequest, findDeviceRequest } from '../domain/oauth/device.ts';
import { formatUserCode } from '../domain/oauth/user-code.ts';
import { startSocialSignIn } from '../domain/social/flow.ts';
import { providerLabels, providerNames } from '../domain/social/providers.ts';
import { socialQueries, type ProviderName } from '../domain/social/queries.ts';
import { AppError } from '../errors.ts';
import { refuseUnstorable } from '../http/unstorable.ts';
import { clearPortalSession, sessionCookie } from '../http/cookies.ts';
import { browserId, checkCsrf, csrfToken } from '../http/csrf.ts';
import { envFromId, envFromPublishableKey, portalUser, render } from './context.ts';
import { localPath } from '../domain/identity/redirects.ts';
import { checkTarget, openPending, portalSignIn, proofOf, sealPending } from './sign-in.ts';
import * as v from './views.ts';

type Form = Record<string, string | undefined>;

function formOf(ctx: Context): Form {
  const body = (ctx.request as { body?: unknown }).body;
  refuseUnstorable({ form: body });
  const out: Form = {};
  for (const [k, val] of Object.entries(typeof body === 'object' && body !== null ? body : {}))
    if (typeof val === 'string') out[k] = val.slice(0, 4096);
  return out;
}

const q = (ctx: Context, name: string): string | undefined => {
  const value = ctx.query[name];
  if (typeof value !== 'string') return undefined;
  refuseUnstorable({ [`query.${name}`]: value });
  return value.slice(0, 2048);
};

/** Any AppError becomes a page with the right status; the message is the user's, not a stack. */
function pages(fn: (ctx: Context) => Promise<void>): Middleware {
  return async (ctx) => {
    try {
      await fn(ctx);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
      render(ctx, {
        title: 'Something went wrong',
        body: v.messageView('Something went wrong', err.message),
        status: err.status,
      });
    }
  };
}

function seeOther(ctx: Context, url: string): void {
  ctx.status = 303;
  ctx.redirect(url);
}

export function portalRouter(deps: AppDeps): Router {
  const router = new Router();
  const base = deps.config.CAIRN_BASE_URL;
  const form = bodyParser({ enableTypes: ['form'], formLimit: '16kb' }) as Middleware;
  const originOf = (url: string | undefined) => (url && !url.startsWith(`${base}/`) ? [new URL(url).origin] : []);

  async function socialButtons(env: EnvIdentity, redirectUrl: string | undefined): Promise<v.SocialButton[]> {
    const target = redirectUrl ?? `${base}/signed-in?env=${env.envId}`;
    return (await socialQueries(deps.db).providers(env.envId))
      .filter((p) => p.enabled)
      .map((p) => ({
        label: providerLabels[p.provider],
        href: `/social/${p.provider}?${new URLSearchParams({ env: env.envId, redirect_url: target })}`,
      }));
  }

  async function showSignIn(
    ctx: Context,
    env: EnvIdentity,
    o: {
      redirectUrl?: string | undefined;
      email?: string | undefined;
      error?: string | undefined;
      status?: number;
      notice?: string | undefined;
    },
  ) {
    const signUp = `/sign-up?${new URLSearchParams({ env: env.envId, ...(o.redirectUrl ? { redirect_url: o.redirectUrl } : {}) })}`;
    render(ctx, {
      env,
      title: 'Sign in',
      status: o.status,
      formTargets: originOf(o.redirectUrl),
      body: v.signInView({
        csrf: csrfToken(ctx, deps.config),
        env: env.envId,
        redirectUrl: o.redirectUrl,
        email: o.email,
        error: o.error,
        notice: o.notice,
        social: await socialButtons(env, o.redirectUrl),
        signUpHref: signUp,
      }),
    });
  }

  const envOf = (ctx: Context) =>
    q(ctx, 'publishable_key') ? envFromPublishableKey(deps, q(ctx, 'publishable_key')) : envFromId(deps, q(ctx, 'env'));

  router.get(
    '/sign-in',
    pages(async (ctx) => {
      browserId(ctx, deps.config);
      const env = await envOf(ctx);
      await showSignIn(ctx, env, {
        redirectUrl: checkTarget(deps, env, q(ctx, 'redirect_url')),
        ...(q(ctx, 'error')
          ? { error: 'Sign-in with that provider did not complete. Try again or use your password.' }
          : {}),
      });
    }),
  );

  router.post(
    '/sign-in',
    form,
    pages(async (ctx) => {
      const f = formOf(ctx);
      checkCsrf(ctx, deps.config, f.csrf);
      const env = await envFromId(deps, f.env);
      const redirectUrl = checkTarget(deps, env, f.redirect_url);
      const email = (f.email ?? '').slice(0, 320);
      try {
        seeOther(
          ctx,
          await portalSignIn(ctx, deps, env, { email, password: f.password ?? '', redirectUrl, proofs: [] }),
        );
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        if (err.code === 'mfa_required') {
          render(ctx, {
            env,
            title: 'Two-step verification',
            formTargets: originOf(redirectUrl),
            body: v.totpView({
              csrf: csrfToken(ctx, deps.config),
              state: sealPending(deps, {
                env: env.envId,
                email,
                password: f.password ?? '',
                redirect_url: redirectUrl,
              }),
            }),
          });
          return;
        }
        if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
        const message =
          err.details?.reason === 'email_not_verified'
            ? 'Confirm your email address first: follow the link in the message we sent you.'
            : err.message.charAt(0).toUpperCase() + err.message.slice(1) + '.';
        await showSignIn(ctx, env, { redirectUrl, email, error: message, status: err.status });
      }
    }),
  );

  router.post(
    '/sign-in/factor',
    form,
    pages(async (ctx) => {
      const f = formOf(ctx);
      checkCsrf(ctx, deps.config, f.csrf);
      const pending = openPending(deps, f.state);
      const env = await envFromId(deps, pending.env);
      try {
        seeOther(
          ctx,
          await portalSignIn(ctx, deps, env, {
            email: pending.email,
            password: pending.password,
            redirectUrl: pending.redirect_url,
            proofs: [proofOf(f.code ?? '')],
          }),
        );
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        if (err.details?.reason === 'invalid_factor') {
          render(ctx, {
            env,
            title: 'Two-step verification',
            status: 401,
            formTargets: originOf(pending.redirect_url),
            body: v.totpView({
              csrf: csrfToken(ctx, deps.config),
              state: f.state!,
              error: 'That code is not valid or was already used. Try the current code.',
            }),
          });
          return;
        }
        if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
        await showSignIn(ctx, env, {
          redirectUrl: pending.redirect_url,
          email: pending.email,
          error: `${err.message}.`,
          status: err.status,
        });
      }
    }),
  );

  router.get(
    '/social/:provider',
    pages(async (ctx) => {
      const provider = (ctx.params as { provider: string }).provider;
      if (!(providerNames as readonly string[]).includes(provider))
        throw new AppError('not_found', 'Unknown sign-in provider.');
      const env = await envFromId(deps, q(ctx, 'env'));
      ctx.redirect(
        await startSocialSignIn(deps.db, deps.config, {
          envId: env.envId,
          provider: provider as ProviderName,
          redirectUrl: q(ctx, 'redirect_url') ?? `${base}/signed-in?env=${env.envId}`,
          sessionMode: 'server',
        }),
      );
    }),
  );

  router.get(
    '/signed-in',
    pages(async (ctx) => {
      const env = await envFromId(deps, q(ctx, 'env'));
      const user = await portalUser(ctx, deps, env.envId);
      if (!user) return showSignIn(ctx, env, {});
      render(ctx, { env, title: 'Signed in', body: v.signedInView(user.email) });
    }),
  );

  router.post(
    '/sign-out',
    form,
    pages(async (ctx) => {
      const f = formOf(ctx);
      checkCsrf(ctx, deps.config, f.csrf);
      // Checked before signing out, so a refused target changes nothing.
      const next = f.next ? localPath(deps.config, f.next) : undefined;
      const token = ctx.cookies.get(sessionCookie);
      const user = token ? await resolveSession(deps.db, token) : undefined;
      if (user) await identityQueries(deps.db).revokeSession(user.session.id);
      clearPortalSession(ctx, deps.config);
      seeOther(ctx, next ?? '/device');
    }),
  );

  router.get(
    '/sign-up',
    pages(async (ctx) => {
      browserId(ctx, deps.config);
      const env = await envOf(ctx);
      const redirectUrl = checkTarget(deps, env, q(ctx, 'redirect_url'));
      const signIn = `/sign-in?${new URLSearchParams({ env: env.envId, ...(redirectUrl ? { redirect_url: redirectUrl } : {}) })}`;
      render(ctx, {
        env,
        title: 'Create account',
        body: v.signUpView({
          csrf: csrfToken(ctx, deps.config),
          env: env.envId,
          redirectUrl,
          minLength: minPasswordLength(env.settings.require_second_factor),
          signInHref: signIn,
        }),
      });
    }),
  );

  router.post(
    '/sign-up',
    form,
    pages(async (ctx) => {
      const f = formOf(ctx);
      checkCsrf(ctx, deps.config, f.csrf);
      const env = await envFromId(deps, f.env);
      const email = (f.email ?? '').trim().slice(0, 320);
      try {
        if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
          throw new AppError('invalid_request', 'Enter an email address such as name@example.com');
        await acceptSignUp(deps, {
          envId: env.envId,
          email,
          password: f.password ?? '',
          redirectUrl: f.redirect_url || undefined,
          ip: clientFrom(ctx).ip,
        });
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        const signIn = `/sign-in?${new URLSearchParams({ env: env.envId })}`;
        render(ctx, {
          env,
          title: 'Create account',
          status: err.status,
          body: v.signUpView({
            csrf: csrfToken(ctx, deps.config),
            env: env.envId,
            redirectUrl: f.redirect_url,
            email,
            error: err.message,
            minLength: minPasswordLength(env.settings.require_second_factor),
            signInHref: signIn,
          }),
        });
        return;
      }
      render(ctx, { env, title: 'Check your email', body: v.checkEmailView(email) });
    }),
  );

  router.get(
    '/verify-email',
    pages(async (ctx) => {
      const ok = q(ctx, 'email_verified') === 'true' && q(ctx, 'status') !== 'invalid';
      render(ctx, {
        title: ok ? 'Email confirmed' : 'Link not valid',
        status: ok ? 200 : 400,
        body: v.verifyEmailView(ok),
      });
    }),
  );

  /** /device and /consent: find the request by its code; sign in if needed; then allow or deny. */
  async function showDevice(ctx: Context, code: string | undefined) {
    const browser = browserId(ctx, deps.config);
    if (!code)
      return render(ctx, { title: 'Connect a device', body: v.deviceEntryView({ csrf: csrfToken(ctx, deps.config) }) });
    let request;
    try {
      request = await findDeviceRequest(deps.db, code, { ip: clientFrom(ctx).ip, browser });
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'not_found') throw err;
      return render(ctx, {
        title: 'Connect a device',
        status: 404,
        body: v.deviceEntryView({
          csrf: csrfToken(ctx, deps.config),
          code,
          error: err.message.charAt(0).toUpperCase() + err.message.slice(1) + '.',
        }),
      });
    }
    const env = await envFromId(deps, request.env_id);
    const here = `${base}/device?user_code=${formatUserCode(request.user_code)}`;
    const user = await portalUser(ctx, deps, env.envId);
    if (!user) return showSignIn(ctx, env, { redirectUrl: here, notice: `Sign in to connect ${request.client_name}.` });
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
  }

  router.get(
    '/device',
    pages((ctx) => showDevice(ctx, q(ctx, 'user_code') ?? q(ctx, 'code'))),
  );
  router.get(
    '/consent',
    pages((ctx) => showDevice(ctx, q(ctx, 'user_code'))),
  );

  router.post(
    '/device',
    form,
    pages(async (ctx) => {
      const f = formOf(ctx);
      checkCsrf(ctx, deps.config, f.csrf);
      await showDevice(ctx, f.user_code?.trim() || undefined);
    }),
  );

  router.post(
    '/consent',
    form,
    pages(async (ctx) => {
      const f = formOf(ctx);
      checkCsrf(ctx, deps.config, f.csrf);
      const request = await findDeviceRequest(deps.db, f.user_code ?? '', {
        ip: clientFrom(ctx).ip,
        browser: browserId(ctx, deps.config),
      });
      const env = await envFromId(deps, request.env_id);
      const user = await portalUser(ctx, deps, env.envId);
      if (!user) throw new AppError('unauthorized', 'Your session ended; open the link on your device again.');
      const approve = f.decision === 'approve';
      await decideDeviceRequest(deps.db, request, user.id, approve);
      render(ctx, {
        env,
        title: approve ? 'Device connected' : 'Request denied',
        body: v.doneView(approve, request.client_name),
      });
    }),
  );

  return router;
}

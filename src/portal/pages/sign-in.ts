// /sign-in: the password form (with the social buttons), and its POST; a second factor continues
// on /sign-in/factor (sign-in-factor.ts).
import { AppError } from '../../app-error.ts';
import { browserId, csrfToken } from '../../http/csrf.ts';
import { defineRoute } from '../../http/route.ts';
import { csrfExample, formPost } from './form-post.ts';
import { envFromId, render } from '../context.ts';
import { seeOther, text } from '../../html/page-route.ts';
import { envOf, originOf, portalPage, showSignIn } from '../page.ts';
import { checkTarget, portalSignIn, sealPending } from '../sign-in.ts';
import * as v from '../views.ts';
import { z } from 'zod';

export const signInPage = defineRoute({
  ...portalPage,
  method: 'get',
  path: '/sign-in',
  operationId: 'signInPage',
  summary: 'The sign-in page (password, social buttons)',
  query: z.looseObject({ publishable_key: text(), env: text(), redirect_url: text(), error: text() }),
  async handle({ query, deps, ctx }) {
    browserId(ctx, deps.config);
    const env = await envOf(deps, query);
    return showSignIn(ctx, deps, env, {
      redirectUrl: checkTarget(deps, env, query.redirect_url),
      ...(query.error ? { error: 'Sign-in with that provider did not complete. Try again or use your password.' } : {}),
    });
  },
});

export const signIn = formPost('/sign-in', ['env', 'redirect_url', 'email', 'password'], {
  operationId: 'signInForm',
  summary: 'Sign in with email and password; a second factor continues on /sign-in/factor',
  example: {
    csrf: csrfExample,
    env: 'env_01m3y7rmf8jsngj5v462839h89',
    redirect_url: 'https://app.example.com/after-sign-in',
    email: 'ada@example.com',
    password: 'correct horse battery staple',
  },
  async handle(f, deps, ctx) {
    const env = await envFromId(deps, f.env);
    const redirectUrl = checkTarget(deps, env, f.redirect_url);
    const email = (f.email ?? '').slice(0, 320);
    try {
      return seeOther(
        ctx,
        await portalSignIn(ctx, deps, env, { email, password: f.password ?? '', redirectUrl, proofs: [] }),
      );
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      if (err.code === 'mfa_required') {
        render(ctx, {
          env,
          title: 'Two-step verification',
          formTargets: originOf(deps, redirectUrl),
          body: v.totpView({
            csrf: csrfToken(ctx, deps.config),
            state: sealPending(deps, { env: env.envId, email, password: f.password ?? '', redirect_url: redirectUrl }),
          }),
        });
        return undefined;
      }
      if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
      const message =
        err.details?.reason === 'email_not_verified'
          ? 'Confirm your email address first: follow the link in the message we sent you.'
          : err.message.charAt(0).toUpperCase() + err.message.slice(1) + '.';
      return showSignIn(ctx, deps, env, { redirectUrl, email, error: message, status: err.status });
    }
  },
});

// /sign-up: the form to create an account, and its POST; the address is confirmed by a link.
import { z } from 'zod';
import { minPasswordLength } from '../../domain/identity/passwords.ts';
import { acceptSignUp } from '../../domain/identity/signup/signup.ts';
import { AppError } from '../../app-error.ts';
import { clientFrom } from '../../http/client.ts';
import { browserId, csrfToken } from '../../http/csrf.ts';
import { defineRoute } from '../../http/route.ts';
import { csrfExample, formPost } from './form-post.ts';
import { envFromId, render } from '../context.ts';
import { text } from '../../html/page-route.ts';
import { envOf, portalPage } from '../page.ts';
import { checkTarget } from '../sign-in.ts';
import * as v from '../views.ts';

export const signUpPage = defineRoute({
  ...portalPage,
  method: 'get',
  path: '/sign-up',
  operationId: 'signUpPage',
  summary: 'The sign-up page',
  query: z.looseObject({ publishable_key: text(), env: text(), redirect_url: text() }),
  async handle({ query, deps, ctx }) {
    browserId(ctx, deps.config);
    const env = await envOf(deps, query);
    const redirectUrl = checkTarget(deps, env, query.redirect_url);
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
    return undefined;
  },
});

export const signUp = formPost('/sign-up', ['env', 'redirect_url', 'email', 'password'], {
  operationId: 'signUpForm',
  summary: 'Create an account; the answer is the same whether or not the address has one',
  example: {
    csrf: csrfExample,
    env: 'env_01m3y7rmf8jsngj5v462839h89',
    redirect_url: 'https://app.example.com/welcome',
    email: 'ada@example.com',
    password: 'correct horse battery staple',
  },
  async handle(f, deps, ctx) {
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
      return undefined;
    }
    render(ctx, { env, title: 'Check your email', body: v.checkEmailView(email) });
    return undefined;
  },
});

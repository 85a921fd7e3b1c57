// /console/sign-in: a secret key opens a console session for its environment and scopes. The key
// is read once and never kept: the browser gets only the session's random token (cookies.ts). Every
// sign-in counts against its address's limit (domain/console/limits.ts) before any key is looked up.
import type { Context } from 'koa';
import { z } from 'zod';
import { consumeConsoleSignIn } from '../../domain/console/limits.ts';
import { openConsoleSession } from '../../domain/console/sessions.ts';
import { principalOf } from '../../domain/tenancy/key-auth.ts';
import { AppError } from '../../app-error.ts';
import { seeOther, text } from '../../html/page-route.ts';
import { clientFrom } from '../../http/client.ts';
import type { AppDeps } from '../../http/context.ts';
import { browserId, csrfToken } from '../../http/csrf.ts';
import { defineRoute } from '../../http/route.ts';
import { resolveConsole, startSession } from '../auth.ts';
import { consolePublicPage, consoleSignInPost, csrfExample } from '../page.ts';
import { render } from '../render.ts';
import { signInView } from '../views/sign-in.ts';

export function showSignIn(ctx: Context, deps: AppDeps, o: { error?: string; status?: number } = {}): undefined {
  const body = signInView({ csrf: csrfToken(ctx, deps.config), error: o.error });
  return render(ctx, deps, { title: 'Sign in', status: o.status, body });
}

/**
 * Counts a sign-in against the client's address (never a header it writes: http/client.ts). Past
 * the limit the sign-in page says when to retry (429 with Retry-After) and the answer is false.
 */
export async function withinSignInLimit(ctx: Context, deps: AppDeps): Promise<boolean> {
  try {
    await consumeConsoleSignIn(deps.db, clientFrom(ctx).ip);
    return true;
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'rate_limited') throw err;
    ctx.set('Retry-After', String(err.retryAfter));
    const error = `Too many sign-ins from this address. Try again in ${err.retryAfter} seconds.`;
    showSignIn(ctx, deps, { status: 429, error });
    return false;
  }
}

export const consoleSignInPage = defineRoute({
  ...consolePublicPage,
  method: 'get',
  path: '/console/sign-in',
  operationId: 'consoleSignInPage',
  summary: "The console's sign-in page",
  query: z.looseObject({ error: text(200) }),
  async handle({ deps, ctx }) {
    browserId(ctx, deps.config);
    if (await resolveConsole(ctx, deps)) return seeOther(ctx, '/console/errors');
    return showSignIn(ctx, deps);
  },
});

export const consoleSignIn = defineRoute({
  ...consoleSignInPost('/console/sign-in', 'consoleSignIn', 'key'),
  summary: 'Sign in to the console with a secret key',
  example: { csrf: csrfExample, key: 'cairn_sk_test_7Hq2mZx9Lw4Rt8Vb3Nc6Pd1Ks5Fg0Yj2' },
  async handle({ body: f, deps, ctx }) {
    if (!(await withinSignInLimit(ctx, deps))) return undefined;
    let key;
    try {
      key = await principalOf(deps, (f.key ?? '').trim(), 'secret');
    } catch (err) {
      // The API's own reason (malformed, unknown, revoked, publishable), said as a page says it.
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      return showSignIn(ctx, deps, {
        status: err.status,
        error:
          `That key does not open the console: ${err.message}. ` +
          'Use a live secret key (cairn_sk_…) of the environment; `cairn admin keys create` makes one.',
      });
    }
    await startSession(ctx, deps, await openConsoleSession(deps.db, key.envId, key.keyId, 'key'));
    return seeOther(ctx, '/console/errors');
  },
});

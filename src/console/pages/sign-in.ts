// /console/sign-in: a secret key opens a console session for its environment and scopes. The key
// is read once and never kept: the browser gets only the session's random token (cookies.ts). Every
// sign-in counts against its address's limit (domain/console/limits.ts) before any key is looked up.
import { z } from 'zod';
import { consumeConsoleSignIn } from '../../domain/console/limits.ts';
import { openConsoleSession } from '../../domain/console/sessions.ts';
import { AppError } from '../../app-error.ts';
import { clientFrom } from '../../http/client.ts';
import { principalOf } from '../../domain/tenancy/key-auth.ts';
import { browserId, checkCsrf, csrfToken } from '../../http/csrf.ts';
import { defineRoute } from '../../http/route.ts';
import type { AppDeps } from '../../http/context.ts';
import type { Context } from 'koa';
import { html } from '../../html/html.ts';
import { form, seeOther, text } from '../../html/page-route.ts';
import { consoleSession, render, startSession } from '../context.ts';
import { consolePage } from '../page.ts';

export function showSignIn(ctx: Context, deps: AppDeps, o: { error?: string; notice?: string; status?: number } = {}) {
  render(ctx, deps, {
    title: 'Sign in',
    status: o.status,
    body: html`<h1>Sign in to the console</h1>
${o.error ? html`<div class="alert error" role="alert" id="sign-in-error">${o.error}</div>` : ''}
${o.notice ? html`<div class="alert ok" role="status">${o.notice}</div>` : ''}
<form method="post" action="/console/sign-in">
<input type="hidden" name="csrf" value="${csrfToken(ctx, deps.config)}">
<label for="key">Secret key</label>
<input id="key" name="key" type="password" autocomplete="off" spellcheck="false" required${o.error ? html` aria-invalid="true" aria-describedby="sign-in-error"` : ''}>
<p class="muted">A secret key of the environment (cairn_sk_…). It opens a session for this browser and is not stored in it.</p>
<button class="primary" type="submit">Sign in</button>
</form>`,
  });
  return undefined;
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
    showSignIn(ctx, deps, {
      status: 429,
      error: `Too many sign-ins from this address. Try again in ${err.retryAfter} seconds.`,
    });
    return false;
  }
}

export const consoleSignInPage = defineRoute({
  ...consolePage,
  method: 'get',
  path: '/console/sign-in',
  operationId: 'consoleSignInPage',
  summary: "The console's sign-in page",
  query: z.looseObject({ error: text(200) }),
  async handle({ deps, ctx }) {
    browserId(ctx, deps.config);
    if (await consoleSession(ctx, deps)) return seeOther(ctx, '/console/errors');
    return showSignIn(ctx, deps);
  },
});

export const consoleSignIn = defineRoute({
  ...consolePage,
  method: 'post',
  path: '/console/sign-in',
  operationId: 'consoleSignIn',
  summary: 'Sign in to the console with a secret key',
  body: form('csrf', 'key'),
  response: { ...consolePage.response, status: 303, type: 'redirect', description: 'To the errors page' },
  async handle({ body: f, deps, ctx }) {
    checkCsrf(ctx, deps.config, f.csrf);
    if (!(await withinSignInLimit(ctx, deps))) return undefined;
    let key;
    try {
      key = await principalOf(deps, (f.key ?? '').trim(), 'secret');
    } catch (err) {
      // The API's own reason (malformed, unknown, revoked, publishable), said as a page says it.
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      return showSignIn(ctx, deps, {
        status: err.status,
        error: `That key does not open the console: ${err.message}. Use a live secret key (cairn_sk_…) of the environment; \`cairn admin keys create\` makes one.`,
      });
    }
    await startSession(ctx, deps, await openConsoleSession(deps.db, key.envId, key.keyId, 'key'));
    return seeOther(ctx, '/console/errors');
  },
});

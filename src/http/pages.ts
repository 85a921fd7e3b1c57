// What the route kernel (route.ts) does for the server-rendered pages: errors answered as the
// route's page; the console's session (`auth: 'console'`), found through the app's hook
// (hooks.ts), so the kernel reads no feature's tables; a console route's scope; and a form's CSRF token
// (`csrf: true`).
import type { Context, Middleware } from 'koa';
import { AppError } from '../app-error.ts';
import type { AppDeps, ClientKeyAuth, Principal, RequestState } from './context.ts';
import { checkCsrf } from './csrf.ts';
import type { KernelHooks } from './hooks.ts';
import type { PageErrors, RouteDef } from './route.ts';

/** An operator signed in to the console (its session cookie): the environment and the scopes it opens. */
export interface ConsolePrincipal {
  /** The console session's id. */
  id: string;
  envId: string;
  envName: string;
  scopes: readonly string[];
}

/** The request's state as the kernel fills it: the principal of the route's auth kind. */
export type RouteState = Omit<RequestState, 'principal'> & {
  principal?: Principal | ConsolePrincipal | ClientKeyAuth;
};

/** The console session's principal, through the app's hook (hooks.ts); signed out is `unauthorized`. */
export async function consolePrincipal(ctx: Context, deps: AppDeps, hooks: KernelHooks): Promise<ConsolePrincipal> {
  const principal = await hooks.console(ctx, deps);
  if (!principal) throw new AppError('unauthorized', 'Sign in to use the console.');
  return principal;
}

/**
 * A page's form: its CSRF token, then the console's scope (so a forged post is refused as one,
 * whatever the key could do). A repeated `csrf` field is no token.
 */
export function formChecks(def: RouteDef, deps: AppDeps): Middleware {
  return async (ctx, next) => {
    if (def.csrf) {
      const sent = ((ctx.request as { body?: unknown }).body as Record<string, unknown> | undefined)?.csrf;
      checkCsrf(ctx, deps.config, typeof sent === 'string' ? sent : undefined);
    }
    const principal = (ctx.state as RouteState).principal as ConsolePrincipal | undefined;
    if (def.auth === 'console' && def.scope && !principal?.scopes.includes(def.scope)) {
      throw new AppError('forbidden', `The key this console was opened with lacks the scope ${def.scope}.`, {
        details: { required_scope: def.scope },
      });
    }
    await next();
  };
}

/** A 4xx AppError becomes the route's error page; anything else goes on to the error middleware. */
export function pageErrors(style: PageErrors, deps: AppDeps): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
      style.page(ctx, err, deps);
    }
  };
}

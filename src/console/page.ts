// What the console's pages share: their declaration on the route kernel (the console session
// cookie, HTML answers, errors as pages, form bodies). A signed-out visitor is sent to the sign-in
// page; a key without the route's scope gets the section's 403 page, signed in; any other 4xx is a
// page saying what went wrong. Posts declare `csrf: true`: the kernel checks the token
// (http/csrf.ts) before the scope or the handler reads or changes anything.
import { z } from 'zod';
import type { SecretScope } from '../domain/tenancy/keys.ts';
import { form, pageRoute } from '../html/page-route.ts';
import type { ConsolePrincipal, PageErrors } from '../http/route.ts';
import { render } from './render.ts';
import { errorPageView, lacksScopeView } from './views/error-page.ts';
import type { Section } from './views/layout.ts';

/**
 * The section of the console a scope's data is in (its 403 page is that section's); alerts share
 * the errors' scopes, so their pages are told by path.
 */
const sectionOf = (scope: string, path: string): Section =>
  path.startsWith('/console/alerts')
    ? 'alerts'
    : scope.startsWith('observability:')
      ? 'errors'
      : scope.startsWith('auth:')
        ? 'users'
        : 'backups';

export const consolePageErrors: PageErrors = {
  page(ctx, err, deps) {
    if (err.code === 'unauthorized') {
      ctx.status = 303;
      ctx.redirect('/console/sign-in');
      return;
    }
    const principal = ctx.state.principal as ConsolePrincipal | undefined;
    const scope = err.details?.required_scope as SecretScope | undefined;
    if (err.code === 'forbidden' && principal && scope) {
      const section = sectionOf(scope, ctx.path);
      const title = section[0]!.toUpperCase() + section.slice(1);
      render(ctx, deps, { title, principal, section, status: 403, body: lacksScopeView(title, scope) });
      return;
    }
    render(ctx, deps, {
      title: err.status === 409 ? 'Conflict' : 'Something went wrong',
      status: err.status,
      body: errorPageView(err.status, err.message),
    });
  },
};

/** A page's CSRF token as its forms carry it (an HMAC of the browser id, base64url), for the examples. */
export const csrfExample = 'Vq3sX9kR2mT7bL0yWc5nHd8pJf1gZe4uAi6oQx2tNrM';

/** The declaration every signed-in console page shares (each adds its scope). */
export const consolePage = { ...pageRoute, tags: ['Console'], auth: 'console', errors: consolePageErrors } as const;

/** The sign-in pages, sign-out and the stylesheet: no session needed. */
export const consolePublicPage = { ...consolePage, auth: 'none' } as const;

/** A signed-in page of one thing its path names by `{id}`, read with the scope given. */
export const consoleItemPage = (path: string, operationId: string, scope: SecretScope) =>
  ({
    ...consolePage,
    method: 'get',
    path,
    operationId,
    scope,
    params: z.object({ id: z.string().max(64) }),
  }) as const;

/** A sign-in form's post: no session needed, its CSRF token checked, then a 303 to the errors page. */
export const consoleSignInPost = <F extends string>(path: string, operationId: string, field: F) =>
  ({
    ...consolePublicPage,
    method: 'post',
    path,
    operationId,
    csrf: true,
    body: form<'csrf' | F>('csrf', field),
    response: { ...consolePublicPage.response, status: 303, type: 'redirect', description: 'To the errors page' },
  }) as const;

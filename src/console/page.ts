// What the console's pages share: their declaration on the route kernel (no API key: the console
// session cookie, HTML answers, errors as pages, form bodies). A signed-out visitor is sent to the
// sign-in page; any other 4xx is a page saying what went wrong. Every POST is CSRF-checked
// (http/csrf.ts) before it reads or changes anything.
import { pageRoute } from '../html/page-route.ts';
import { html } from '../html/html.ts';
import type { PageErrors } from '../http/route.ts';
import { render } from './context.ts';

export const consolePageErrors: PageErrors = {
  page(ctx, err) {
    if (err.code === 'unauthorized') {
      ctx.status = 303;
      ctx.redirect('/console/sign-in');
      return;
    }
    render(ctx, undefined, {
      title: err.status === 409 ? 'Conflict' : 'Something went wrong',
      status: err.status,
      body: html`<h1>${err.status === 403 ? 'Not allowed' : err.status === 404 ? 'Not found' : 'Something went wrong'}</h1>
<div class="alert error" role="alert">${err.message}</div>
<p><a href="/console/errors">Back to the console</a></p>`,
    });
  },
};

/** The declaration every console page shares. */
export const consolePage = { ...pageRoute, tags: ['Console'], auth: 'none', errors: consolePageErrors } as const;

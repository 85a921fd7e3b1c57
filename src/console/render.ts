// How a console page is answered: the layout around its view, the security headers of every page
// (http/page-headers.ts), and never kept by a cache (a console page holds the environment's data).
import type { Context } from 'koa';
import type { Html } from '../html/html.ts';
import type { AppDeps } from '../http/context.ts';
import { csrfToken } from '../http/csrf.ts';
import { pageHeaders } from '../http/page-headers.ts';
import type { ConsolePrincipal } from '../http/route.ts';
import { stylesheetPath } from './static.ts';
import { layout, type Section, type SitePage } from './views/layout.ts';

export interface ConsoleRender {
  title: string;
  body: Html;
  status?: number | undefined;
  /** Signed in: the header with the environment, navigation and "Sign out". */
  principal?: ConsolePrincipal | undefined;
  section?: Section;
  /** A page of the service outside the console (views/layout.ts). */
  site?: SitePage;
  /** A small script of the page's own (progressive enhancement), allowed by its nonce alone. */
  script?: Html | undefined;
}

/** Answers the page; undefined, so a handler can `return render(…)`. */
export function render(ctx: Context, deps: AppDeps, o: ConsoleRender): undefined {
  const nonce = pageHeaders(ctx, { scripts: o.script !== undefined });
  ctx.set('Cache-Control', 'no-store');
  ctx.status = o.status ?? 200;
  ctx.type = 'text/html; charset=utf-8';
  const signedIn = o.principal
    ? { envName: o.principal.envName, csrf: csrfToken(ctx, deps.config), section: o.section }
    : undefined;
  ctx.body = layout({
    title: o.title,
    nonce,
    stylesheet: stylesheetPath,
    body: o.body,
    ...(signedIn ? { signedIn } : {}),
    ...(o.script ? { script: o.script } : {}),
    ...(o.site ? { site: o.site } : {}),
  });
  return undefined;
}

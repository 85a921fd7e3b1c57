// How a console page is answered: the layout around its view, the security headers of every page
// (http/page-headers.ts), and never kept by a cache (a console page holds the environment's data).
import type { Context } from 'koa';
import type { SecretScope } from '../domain/tenancy/keys.ts';
import type { Html } from '../html/html.ts';
import type { AppDeps } from '../http/context.ts';
import { csrfToken } from '../http/csrf.ts';
import { pageHeaders } from '../http/page-headers.ts';
import type { ConsolePrincipal } from '../http/route.ts';
import { can } from './auth.ts';
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

/** What a section page's forms need: their CSRF token, and whether the key may send them. */
export interface SectionForms {
  csrf: string;
  writable: boolean;
}

/** The scope a section's forms change things under; a key without it sees them disabled. */
const writeScope: Record<Section, SecretScope> = {
  errors: 'observability:write',
  alerts: 'observability:write',
  users: 'auth:write',
  backups: 'backups:write',
};

/** Answers a signed-in page of a section, its view given what the section's forms need. */
export function renderSection(
  ctx: Context,
  deps: AppDeps,
  principal: ConsolePrincipal,
  page: { title: string; section: Section; status?: number | undefined },
  view: (forms: SectionForms) => Html,
): undefined {
  const forms = { csrf: csrfToken(ctx, deps.config), writable: can(principal, writeScope[page.section]) };
  return render(ctx, deps, { ...page, principal, body: view(forms) });
}

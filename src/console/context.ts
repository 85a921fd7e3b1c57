// What a console request knows: its session (from the console cookie), and how to answer a page
// with the console's layout and the security headers of every page (http/page-headers.ts).
import type { Context } from 'koa';
import {
  consoleSessionHours,
  endConsoleSession,
  resolveConsoleSession,
  type ConsoleSession,
} from '../domain/console/sessions.ts';
import type { SecretScope } from '../domain/tenancy/keys.ts';
import { AppError } from '../app-error.ts';
import { consoleCookie, setConsoleSession } from '../http/cookies.ts';
import type { AppDeps } from '../http/context.ts';
import { checkCsrf, csrfToken } from '../http/csrf.ts';
import { pageHeaders } from '../http/page-headers.ts';
import { html, type Html } from '../html/html.ts';
import { layout, type Section } from './layout.ts';

export async function consoleSession(ctx: Context, deps: AppDeps): Promise<ConsoleSession | undefined> {
  const token = ctx.cookies.get(consoleCookie);
  return token ? resolveConsoleSession(deps.db, token) : undefined;
}

/**
 * Gives the browser a new session (its token), ending on the server the one its cookie held: a
 * browser has one console session, and the one it replaced would otherwise live on unseen.
 */
export async function startSession(ctx: Context, deps: AppDeps, token: string): Promise<void> {
  const previous = ctx.cookies.get(consoleCookie);
  if (previous) await endConsoleSession(deps.db, previous);
  setConsoleSession(ctx, deps.config, token, consoleSessionHours * 3600);
}

/**
 * The session, else `unauthorized`, which console pages answer with a redirect to
 * /console/sign-in (expired, signed out, or its key revoked).
 */
export async function requireSession(ctx: Context, deps: AppDeps): Promise<ConsoleSession> {
  const session = await consoleSession(ctx, deps);
  if (!session) throw new AppError('unauthorized', 'Sign in to use the console.');
  return session;
}

export const can = (session: ConsoleSession, scope: SecretScope): boolean => session.scopes.includes(scope);

/** The section of the console a scope's data is in (its 403 page is that section's). */
const sectionOf = (scope: SecretScope): Section =>
  scope.startsWith('observability:') ? 'errors' : scope.startsWith('auth:') ? 'users' : 'backups';

/**
 * A page's session when its key has `scope`; else the section's 403 page is rendered and the
 * answer is undefined (the handler then returns). Signed out: `unauthorized` (to sign-in).
 */
export async function sessionWith(
  ctx: Context,
  deps: AppDeps,
  scope: SecretScope,
): Promise<ConsoleSession | undefined> {
  const session = await requireSession(ctx, deps);
  if (can(session, scope)) return session;
  lacksScope(ctx, deps, session, sectionOf(scope), scope);
  return undefined;
}

/** As sessionWith, for a form's POST: its CSRF token is checked first, before anything is read (http/csrf.ts). */
export async function postWith(
  ctx: Context,
  deps: AppDeps,
  csrf: string | undefined,
  scope: SecretScope,
): Promise<ConsoleSession | undefined> {
  checkCsrf(ctx, deps.config, csrf);
  return sessionWith(ctx, deps, scope);
}

/** The 403 page of a section the session's key has no scope for (its forms are refused the same way). */
function lacksScope(
  ctx: Context,
  deps: AppDeps,
  session: ConsoleSession,
  section: Section,
  scope: SecretScope,
): undefined {
  const title = section[0]!.toUpperCase() + section.slice(1);
  render(ctx, deps, {
    title,
    session,
    section,
    status: 403,
    body: html`<h1>${title}</h1><div class="alert error" role="alert">The key this console was opened with lacks the scope ${scope}.</div>`,
  });
  return undefined;
}

export interface ConsoleRender {
  title: string;
  body: Html;
  status?: number;
  /** Signed in: the header with the environment, navigation and "Sign out". */
  session?: ConsoleSession | undefined;
  section?: Section;
  /** A small script of the page's own (progressive enhancement), allowed by its nonce alone. */
  script?: string;
}

export function render(ctx: Context, deps: AppDeps | undefined, o: ConsoleRender): void {
  const nonce = pageHeaders(ctx, { scripts: o.script !== undefined });
  // A console page holds the environment's data: never kept by a shared cache or the back button.
  ctx.set('Cache-Control', 'no-store');
  ctx.status = o.status ?? 200;
  ctx.type = 'text/html; charset=utf-8';
  const signedIn =
    o.session && deps
      ? { envName: o.session.envName, csrf: csrfToken(ctx, deps.config), section: o.section }
      : undefined;
  ctx.body = layout({
    title: o.title,
    nonce,
    body: o.body,
    ...(signedIn ? { signedIn } : {}),
    ...(o.script ? { script: o.script } : {}),
  });
}

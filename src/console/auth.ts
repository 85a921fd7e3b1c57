// Who a console request is: the console session its cookie holds (domain/console/sessions.ts).
// The route kernel reaches it through `resolveConsole` (http/route.ts AuthResolvers), which the app
// passes where it mounts the routes, so the kernel reads no table of ours; routes declare
// `auth: 'console'` and a scope, and never look for the session themselves.
import type { Context } from 'koa';
import {
  consoleSessionHours,
  endConsoleSession,
  resolveConsoleSession,
  type ConsoleSession,
} from '../domain/console/sessions.ts';
import type { SecretScope } from '../domain/tenancy/keys.ts';
import { consoleCookie, setConsoleSession } from '../http/cookies.ts';
import type { AppDeps } from '../http/context.ts';
import type { ConsolePrincipal } from '../http/route.ts';

/** The live console session of the request's cookie, if any (expired, signed out, or its key revoked: none). */
export async function resolveConsole(ctx: Context, deps: AppDeps): Promise<ConsoleSession | undefined> {
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

export const can = (principal: ConsolePrincipal, scope: SecretScope): boolean => principal.scopes.includes(scope);

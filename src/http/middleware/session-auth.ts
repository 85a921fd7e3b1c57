// The end user's session bearer (docs/api.md: "A session bearer … is sent as Authorization:
// Bearer"), for routes whose auth is `session`. The app resolves the token (KernelHooks.session);
// a missing or malformed header and a token that resolves to no live session are `unauthorized`
// with one message: none can be told apart.
import type { Context } from 'koa';
import { AppError } from '../../app-error.ts';
import type { AppDeps, SessionPrincipal } from '../context.ts';
import type { KernelHooks } from '../hooks.ts';

export async function authenticateSession(ctx: Context, deps: AppDeps, hooks: KernelHooks): Promise<SessionPrincipal> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
  const refused = new AppError('unauthorized', 'no live session: send "Authorization: Bearer <session token>"');
  if (!m) throw refused;
  const principal = await hooks.session(ctx, deps, m[1]!);
  if (!principal) throw refused;
  return principal;
}

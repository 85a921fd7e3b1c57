// The end user's session bearer (docs/api.md: "A session bearer … is sent as Authorization:
// Bearer"), resolved for the route kernel's `session` routes (/v1/client/session, sign-out and
// factor routes). The session names its environment, so no publishable key is needed. A session
// that is unknown, revoked or expired, or whose user was deleted, resolves to nothing, which the
// kernel refuses with one message: none can be told apart.
import type { Context } from 'koa';
import { resolveSession, type ResolvedSession } from '../../../domain/identity/sessions/sessions.ts';
import { tenancyQueries } from '../../../domain/tenancy/queries.ts';
import type { AppDeps, SessionPrincipal } from '../../../http/context.ts';

/** The resolved session, kept for the handler so it is not read twice. */
export interface SessionState {
  identitySession?: ResolvedSession;
}

/** The principal of a session bearer's token, or undefined when no live session has it. */
export async function sessionPrincipal(
  ctx: Context,
  deps: AppDeps,
  token: string,
): Promise<SessionPrincipal | undefined> {
  const resolved = await resolveSession(deps.db, token);
  if (!resolved) return undefined;
  const env = await tenancyQueries(deps.db).envById(resolved.session.env_id);
  if (!env) return undefined;
  (ctx.state as SessionState).identitySession = resolved;
  return {
    keyId: resolved.session.id,
    kind: 'session',
    envId: env.id,
    envName: env.name,
    scopes: [],
    endUserId: resolved.user.id,
  };
}

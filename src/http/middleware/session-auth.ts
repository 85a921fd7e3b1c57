// The end user's session bearer (docs/api.md: "A session bearer … is sent as Authorization:
// Bearer"), for /v1/client/session, sign-out and factor routes. The session names its environment,
// so no publishable key is needed. A missing, malformed, unknown, revoked or expired session, or
// one whose user was deleted, is `unauthorized` with one message: none can be told apart.
import type { Context } from 'koa';
import { resolveSession, type ResolvedSession } from '../../domain/identity/sessions/sessions.ts';
import { tenancyQueries } from '../../domain/tenancy/queries.ts';
import { AppError } from '../../app-error.ts';
import type { AppDeps, Principal } from '../context.ts';

/** The resolved session, kept for the handler so it is not read twice. */
export interface SessionState {
  identitySession?: ResolvedSession;
}

export async function authenticateSession(ctx: Context, deps: AppDeps): Promise<Principal> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
  const refused = new AppError('unauthorized', 'no live session: send "Authorization: Bearer <session token>"');
  if (!m) throw refused;
  const resolved = await resolveSession(deps.db, m[1]!);
  if (!resolved) throw refused;
  const env = await tenancyQueries(deps.db).envById(resolved.session.env_id);
  if (!env) throw refused;
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

// POST /sign-out: ends the portal's session, then goes on to a page of the portal.
import { sessionQueries } from '../../domain/identity/sessions/queries.ts';
import { localPath } from '../../domain/identity/redirects.ts';
import { resolveSession } from '../../domain/identity/sessions/sessions.ts';
import { clearPortalSession, sessionCookie } from '../../http/cookies.ts';
import { seeOther } from '../../html/page-route.ts';
import { portalPage } from '../page.ts';
import { csrfExample, formPost } from './form-post.ts';

export const signOut = formPost('/sign-out', ['next'], {
  operationId: 'signOutForm',
  summary: "End the portal's session",
  example: { csrf: csrfExample, next: '/device?user_code=BDFG-HJKL' },
  response: { ...portalPage.response, status: 303, type: 'redirect', description: 'To `next`, else /device' },
  async handle(f, deps, ctx) {
    // Checked before signing out, so a refused target changes nothing.
    const next = f.next ? localPath(deps.config, f.next) : undefined;
    const token = ctx.cookies.get(sessionCookie);
    const user = token ? await resolveSession(deps.db, token) : undefined;
    if (user) await sessionQueries(deps.db).revokeSession(user.session.id);
    clearPortalSession(ctx, deps.config);
    return seeOther(ctx, next ?? '/device');
  },
});

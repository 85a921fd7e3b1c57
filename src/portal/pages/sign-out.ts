// POST /sign-out: ends the portal's session, then goes on to a page of the portal.
import { sessionQueries } from '../../domain/identity/sessions/queries.ts';
import { localPath } from '../../domain/identity/redirects.ts';
import { resolveSession } from '../../domain/identity/sessions/sessions.ts';
import { clearPortalSession, sessionCookie } from '../../http/cookies.ts';
import { checkCsrf } from '../../http/csrf.ts';
import { defineRoute } from '../../http/route.ts';
import { form, seeOther } from '../../html/page-route.ts';
import { portalPage } from '../page.ts';

export const signOut = defineRoute({
  ...portalPage,
  method: 'post',
  path: '/sign-out',
  operationId: 'signOutForm',
  summary: "End the portal's session",
  body: form('csrf', 'next'),
  response: { ...portalPage.response, status: 303, type: 'redirect', description: 'To `next`, else /device' },
  async handle({ body: f, deps, ctx }) {
    checkCsrf(ctx, deps.config, f.csrf);
    // Checked before signing out, so a refused target changes nothing.
    const next = f.next ? localPath(deps.config, f.next) : undefined;
    const token = ctx.cookies.get(sessionCookie);
    const user = token ? await resolveSession(deps.db, token) : undefined;
    if (user) await sessionQueries(deps.db).revokeSession(user.session.id);
    clearPortalSession(ctx, deps.config);
    return seeOther(ctx, next ?? '/device');
  },
});

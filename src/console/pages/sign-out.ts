// POST /console/sign-out: ends the console session on the server, then shows the sign-in page.
import { endConsoleSession } from '../../domain/console/sessions.ts';
import { clearConsoleSession, consoleCookie } from '../../http/cookies.ts';
import { checkCsrf } from '../../http/csrf.ts';
import { defineRoute } from '../../http/route.ts';
import { form, seeOther } from '../../html/page-route.ts';
import { consolePage } from '../page.ts';

export const consoleSignOut = defineRoute({
  ...consolePage,
  method: 'post',
  path: '/console/sign-out',
  operationId: 'consoleSignOut',
  summary: 'End the console session',
  body: form('csrf'),
  response: { ...consolePage.response, status: 303, type: 'redirect', description: 'To the sign-in page' },
  async handle({ body: f, deps, ctx }) {
    checkCsrf(ctx, deps.config, f.csrf);
    const token = ctx.cookies.get(consoleCookie);
    if (token) await endConsoleSession(deps.db, token);
    clearConsoleSession(ctx, deps.config);
    return seeOther(ctx, '/console/sign-in');
  },
});

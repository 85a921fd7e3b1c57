// POST /console/sign-out: ends the console session on the server, then shows the sign-in page. It
// needs no live session (an expired one still clears its cookie), only the page's CSRF token.
import { endConsoleSession } from '../../domain/console/sessions.ts';
import { form, seeOther } from '../../html/page-route.ts';
import { clearConsoleSession, consoleCookie } from '../../http/cookies.ts';
import { defineRoute } from '../../http/route.ts';
import { consolePublicPage, csrfExample } from '../page.ts';

export const consoleSignOut = defineRoute({
  ...consolePublicPage,
  method: 'post',
  path: '/console/sign-out',
  operationId: 'consoleSignOut',
  summary: 'End the console session',
  csrf: true,
  body: form('csrf'),
  example: { csrf: csrfExample },
  response: { ...consolePublicPage.response, status: 303, type: 'redirect', description: 'To the sign-in page' },
  async handle({ deps, ctx }) {
    const token = ctx.cookies.get(consoleCookie);
    if (token) await endConsoleSession(deps.db, token);
    clearConsoleSession(ctx, deps.config);
    return seeOther(ctx, '/console/sign-in');
  },
});

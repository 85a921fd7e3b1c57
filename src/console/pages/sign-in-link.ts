// GET /console/sign-in/link?token=…: a one-use sign-in link (domain/console/links.ts) opens a
// console session and the errors page; a used, expired or unknown one shows the sign-in page saying
// so, and how to get another.
import { z } from 'zod';
import { consoleSessionHours } from '../../domain/console/sessions.ts';
import { consoleLinkMinutes, consoleLinkPath, redeemConsoleLink } from '../../domain/console/links.ts';
import { setConsoleSession } from '../../http/cookies.ts';
import { browserId } from '../../http/csrf.ts';
import { defineRoute } from '../../http/route.ts';
import { seeOther, text } from '../../portal/page.ts';
import { consolePage } from '../page.ts';
import { showSignIn } from './sign-in.ts';

export const consoleSignInLink = defineRoute({
  ...consolePage,
  method: 'get',
  path: consoleLinkPath,
  operationId: 'consoleSignInLink',
  summary: 'Sign in to the console with a one-use link',
  query: z.looseObject({ token: text(100) }),
  response: { ...consolePage.response, status: 303, type: 'redirect', description: 'To the errors page' },
  async handle({ query, deps, ctx }) {
    const session = await redeemConsoleLink(deps.db, query.token ?? '');
    if (!session) {
      browserId(ctx, deps.config);
      return showSignIn(ctx, deps, {
        status: 410,
        error: `This sign-in link was already used or has expired (links work once, for ${consoleLinkMinutes} minutes). Print a new one with \`cairn console --env <env name>\`, or sign in with a secret key.`,
      });
    }
    setConsoleSession(ctx, deps.config, session, consoleSessionHours * 3600);
    return seeOther(ctx, '/console/errors');
  },
});

// /console/sign-in/link: a one-use sign-in link (domain/console/links.ts). GET only shows a page
// (views/link.ts) and changes nothing, so a mail scanner or `curl` fetching the link leaves it to
// the person; the page's button POSTs the token with its CSRF token, which uses the link, opens
// the session (ending the one the browser had) and goes to the errors page. The CSRF token is the
// signed double-submit cookie every console form carries (http/csrf.ts): the GET gives a browser
// without a session its pre-session id, as OWASP's CSRF Prevention Cheat Sheet asks for login
// forms, so a fresh browser can post it and another site cannot. A used, expired or unknown link
// shows the sign-in page saying so, and how to get another.
import type { Context } from 'koa';
import { z } from 'zod';
import {
  consoleLinkMinutes,
  consoleLinkPath,
  consoleLinkState,
  redeemConsoleLink,
} from '../../domain/console/links.ts';
import type { AppDeps } from '../../http/context.ts';
import { csrfToken } from '../../http/csrf.ts';
import { defineRoute } from '../../http/route.ts';
import { seeOther, text } from '../../html/page-route.ts';
import { resolveConsole, startSession } from '../auth.ts';
import { consolePublicPage, consoleSignInPost, csrfExample } from '../page.ts';
import { render } from '../render.ts';
import { linkGoneMessage, linkPage } from '../views/link.ts';
import { showSignIn, withinSignInLimit } from './sign-in.ts';

const gone = (ctx: Context, deps: AppDeps, envName: string | undefined) =>
  showSignIn(ctx, deps, { status: 410, error: linkGoneMessage(consoleLinkMinutes, envName) });

export const consoleSignInLinkPage = defineRoute({
  ...consolePublicPage,
  method: 'get',
  path: consoleLinkPath,
  operationId: 'consoleSignInLinkPage',
  summary: 'The page of a one-use console sign-in link: says what it opens; using it takes its button',
  query: z.looseObject({ token: text(100) }),
  async handle({ query, deps, ctx }) {
    const token = query.token ?? '';
    const link = await consoleLinkState(deps.db, token);
    if (!link?.usable) return gone(ctx, deps, link?.env_name);
    const current = await resolveConsole(ctx, deps);
    return render(ctx, deps, {
      title: current ? 'Switch console session' : 'Sign in',
      body: linkPage({
        token,
        csrf: csrfToken(ctx, deps.config),
        linkEnv: link.env_name,
        currentEnv: current?.envName,
      }),
    });
  },
});

export const consoleSignInLink = defineRoute({
  ...consoleSignInPost(consoleLinkPath, 'consoleSignInLink', 'token'),
  summary: 'Sign in to the console with a one-use link (the button of its page)',
  example: { csrf: csrfExample, token: 'cairn_clink_9fKx2Lm7Qp4Rt1Vw8Zb3Nc6Hd0Js5Ye' },
  async handle({ body: f, deps, ctx }) {
    if (!(await withinSignInLimit(ctx, deps))) return undefined;
    const token = f.token ?? '';
    const opened = await redeemConsoleLink(deps.db, token);
    if (!opened) return gone(ctx, deps, (await consoleLinkState(deps.db, token))?.env_name);
    await startSession(ctx, deps, opened);
    return seeOther(ctx, '/console/errors');
  },
});

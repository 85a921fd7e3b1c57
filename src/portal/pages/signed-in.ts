// GET /signed-in: where a portal sign-in without a redirect_url ends.
import { z } from 'zod';
import { defineRoute } from '../../http/route.ts';
import { envFromId, portalUser, render } from '../context.ts';
import { text } from '../../html/page-route.ts';
import { portalPage, showSignIn } from '../page.ts';
import * as v from '../views.ts';

export const signedIn = defineRoute({
  ...portalPage,
  method: 'get',
  path: '/signed-in',
  operationId: 'signedInPage',
  summary: 'Who is signed in to the portal (the sign-in page when no one is)',
  query: z.looseObject({ env: text() }),
  async handle({ query, deps, ctx }) {
    const env = await envFromId(deps, query.env);
    const user = await portalUser(ctx, deps, env.envId);
    if (!user) return showSignIn(ctx, deps, env, {});
    render(ctx, { env, title: 'Signed in', body: v.signedInView(user.email) });
    return undefined;
  },
});

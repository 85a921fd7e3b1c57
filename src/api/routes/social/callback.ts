// GET and POST /v1/oidc/callback: every social provider's return address. Providers answer with a
// query (GET) or, with response_mode=form_post (Apple), a form (POST); both end the same way, in a
// 303 to the caller's redirect_url, so the browser follows with a GET even after Apple's POST.
import { z } from 'zod';
import { completeSocialSignIn } from '../../../domain/social/flow.ts';
import { clientFrom } from '../../../http/client.ts';
import { setPortalSession } from '../../../http/cookies.ts';
import { defineRoute, type HandlerInput } from '../../../http/route.ts';

const field = (description: string) => z.unknown().optional().meta({ description });
// What providers send; anything else is passed on to the flow, which reads only what it knows.
const callbackParams = z.looseObject({
  state: field('The state Cairn sent'),
  code: field('The authorization code'),
  error: field("The provider's error, when the user declined or it failed"),
  iss: field('The issuer (RFC 9207)'),
  user: field("Apple's user name and email, on the first sign-in only"),
});

/** Parameters as single strings, bounded; a repeated or huge one is dropped, and the flow says what is missing. */
function stringsOf(raw: Record<string, unknown>): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) if (typeof v === 'string' && v.length <= 8192) params[k] = v;
  return params;
}

async function complete(
  { deps, ctx }: Pick<HandlerInput<unknown, unknown, unknown>, 'deps' | 'ctx'>,
  raw: object,
): Promise<undefined> {
  const outcome = await completeSocialSignIn(deps, stringsOf(raw as Record<string, unknown>), clientFrom(ctx));
  if (outcome.kind === 'portal') setPortalSession(ctx, deps.config, outcome.sessionToken);
  ctx.status = 303;
  ctx.redirect(outcome.url);
  return undefined;
}

const response = {
  status: 303,
  type: 'redirect' as const,
  description: 'To redirect_url with auth_ticket (server mode) or the bearer in the fragment (browser mode)',
  schema: z.undefined(),
};

export const callback = defineRoute({
  method: 'get',
  path: '/v1/oidc/callback',
  operationId: 'oidcCallback',
  summary: "Every social provider's return address; redirects to the caller's redirect_url",
  tags: ['Social sign-in'],
  auth: 'none',
  query: callbackParams,
  response,
  handle: (input) => complete(input, input.query),
});

export const callbackFormPost = defineRoute({
  method: 'post',
  path: '/v1/oidc/callback',
  operationId: 'oidcCallbackFormPost',
  summary: 'The same, for providers that answer with response_mode=form_post (Apple)',
  tags: ['Social sign-in'],
  auth: 'none',
  bodyType: 'form',
  bodyLimit: 64 * 1024,
  body: callbackParams,
  example: {
    state: 'kq3N9xV2mR7tB4wZ8cL1pH6sD0fJ5gY',
    code: 'c8e2f0a4b6d1e3f5a7c9b0d2e4f6a8c0e.0.rsvw.Kq7Zb2Xp9Lm4Tn8',
  },
  response,
  handle: (input) => complete(input, input.body),
});

export const callbackRoutes = [callback, callbackFormPost];

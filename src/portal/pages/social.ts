// GET /social/{provider}: a social button of the sign-in page; sends the browser to the provider.
import { z } from 'zod';
import { startSocialSignIn } from '../../domain/social/flow.ts';
import { providerNames } from '../../contract/social.ts';
import type { ProviderName } from '../../domain/social/queries.ts';
import { AppError } from '../../app-error.ts';
import { defineRoute } from '../../http/route.ts';
import { envFromId } from '../context.ts';
import { text } from '../../html/page-route.ts';
import { portalPage } from '../page.ts';

export const socialStart = defineRoute({
  ...portalPage,
  method: 'get',
  path: '/social/{provider}',
  operationId: 'socialSignInPage',
  summary: "Start a social sign-in from the portal: a redirect to the provider's page",
  description:
    "Starts a sign-in with `google`, `github` or `apple` for the environment `env` names: a 302 to the provider with state, nonce and PKCE, as `GET /v1/client/oauth/{provider}/start` does in server mode. The provider returns to `/v1/oidc/callback`, which sends the browser on to `redirect_url` (default `/signed-in`): to a portal page with the session in the portal's cookie, to an app with `auth_ticket`, or with `error` when the sign-in failed. An unknown provider, one the environment has not enabled, or a missing environment is a 404 page; a `redirect_url` the environment does not allow is a 400 page.",
  params: z.object({ provider: z.string().max(64) }),
  query: z.looseObject({ env: text(), redirect_url: text() }),
  response: { ...portalPage.response, status: 302, type: 'redirect', description: "To the provider's page" },
  async handle({ params, query, deps, ctx }) {
    if (!(providerNames as readonly string[]).includes(params.provider))
      throw new AppError('not_found', 'Unknown sign-in provider.');
    const env = await envFromId(deps, query.env);
    ctx.redirect(
      await startSocialSignIn(deps.db, deps.config, {
        envId: env.envId,
        provider: params.provider as ProviderName,
        redirectUrl: query.redirect_url ?? `${deps.config.CAIRN_BASE_URL}/signed-in?env=${env.envId}`,
        sessionMode: 'server',
      }),
    );
    return undefined;
  },
});

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

// GET /verify-email: where a verification link lands when it names no redirect_url of its own.
import { z } from 'zod';
import { defineRoute } from '../../http/route.ts';
import { render } from '../context.ts';
import { text } from '../../html/page-route.ts';
import { portalPage } from '../page.ts';
import * as v from '../views.ts';

export const verifyEmail = defineRoute({
  ...portalPage,
  method: 'get',
  path: '/verify-email',
  operationId: 'verifyEmailPage',
  summary: 'Whether an email address was confirmed',
  query: z.looseObject({ email_verified: text(), status: text() }),
  async handle({ query, ctx }) {
    const ok = query.email_verified === 'true' && query.status !== 'invalid';
    render(ctx, {
      title: ok ? 'Email confirmed' : 'Link not valid',
      status: ok ? 200 : 400,
      body: v.verifyEmailView(ok),
    });
    return undefined;
  },
});

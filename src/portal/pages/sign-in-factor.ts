// POST /sign-in/factor: the TOTP (or recovery code) step of a portal sign-in. Who is signing in
// travels sealed in the form (../sign-in.ts), so the step re-runs the whole check.
import { AppError } from '../../app-error.ts';
import { csrfToken } from '../../http/csrf.ts';
import { csrfExample, formPost } from './form-post.ts';
import { envFromId, render } from '../context.ts';
import { seeOther } from '../../html/page-route.ts';
import { originOf, showSignIn } from '../page.ts';
import { openPending, portalSignIn, proofOf } from '../sign-in.ts';
import * as v from '../views.ts';

export const signInFactor = formPost('/sign-in/factor', ['state', 'code'], {
  operationId: 'signInFactorForm',
  summary: 'The second step of a portal sign-in: a TOTP or recovery code',
  example: { csrf: csrfExample, state: 'v1.k1.Xq3vL9mT0bRf2sYw.h7Gd0pQk2Zr9Vt4Nc8Ew1uJy5Ls6Ba3Mi', code: '123456' },
  async handle(f, deps, ctx) {
    const pending = openPending(deps, f.state);
    const env = await envFromId(deps, pending.env);
    try {
      return seeOther(
        ctx,
        await portalSignIn(ctx, deps, env, {
          email: pending.email,
          password: pending.password,
          redirectUrl: pending.redirect_url,
          proofs: [proofOf(f.code ?? '')],
        }),
      );
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      if (err.details?.reason === 'invalid_factor') {
        render(ctx, {
          env,
          title: 'Two-step verification',
          status: 401,
          formTargets: originOf(deps, pending.redirect_url),
          body: v.totpView({
            csrf: csrfToken(ctx, deps.config),
            state: f.state!,
            error: 'That code is not valid or was already used. Try the current code.',
          }),
        });
        return undefined;
      }
      if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
      return showSignIn(ctx, deps, env, {
        redirectUrl: pending.redirect_url,
        email: pending.email,
        error: `${err.message}.`,
        status: err.status,
      });
    }
  },
});

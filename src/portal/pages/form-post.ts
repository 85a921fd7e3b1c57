// A portal form's POST: every one carries the CSRF token of its page (http/csrf.ts), checked before
// any field is read, so the check cannot be left out of one form.
import type { Context } from 'koa';
import { z } from 'zod';
import { checkCsrf } from '../../http/csrf.ts';
import type { AppDeps } from '../../http/context.ts';
import { defineRoute, type RouteDef } from '../../http/route.ts';
import { form } from '../../html/page-route.ts';
import { portalPage } from '../page.ts';

/** A page's CSRF token as its forms carry it (an HMAC of the browser id, base64url), for the examples. */
export const csrfExample = 'Vq3sX9kR2mT7bL0yWc5nHd8pJf1gZe4uAi6oQx2tNrM';

export type FormFields<F extends string> = z.output<ReturnType<typeof form<F | 'csrf'>>>;

/** `POST <path>` of a form with `fields` (and `csrf`); the handler answers the page or a redirect. */
export function formPost<F extends string>(
  path: string,
  fields: F[],
  def: {
    operationId: string;
    summary: string;
    /** A body the form takes, for the OpenAPI document: its fields as a browser sends them. */
    example: Partial<Record<F | 'csrf', string>>;
    response?: RouteDef['response'];
    handle(f: FormFields<F>, deps: AppDeps, ctx: Context): Promise<undefined>;
  },
): RouteDef {
  const body = form<F | 'csrf'>('csrf', ...fields);
  return defineRoute({
    ...portalPage,
    method: 'post',
    path,
    operationId: def.operationId,
    summary: def.summary,
    body,
    // Each field is optional text, so the fields as strings are an input; TS cannot see it through F.
    example: def.example as z.input<typeof body>,
    response: def.response ?? portalPage.response,
    async handle({ body: f, deps, ctx }) {
      checkCsrf(ctx, deps.config, (f as FormFields<never>).csrf);
      return def.handle(f, deps, ctx);
    },
  });
}

// What the server-rendered pages (the Account Portal's and the console's) share in their route
// declarations: HTML answers, form bodies of at most 16 KiB, lenient query and form fields, and
// the 303 that sends a browser on after a form's POST.
import type { Context } from 'koa';
import { z } from 'zod';

/** The declaration every page shares (each adds its tags, auth and error page). */
export const pageRoute = {
  bodyType: 'form',
  bodyLimit: 16 * 1024,
  response: { status: 200, type: 'html', description: 'An HTML page', schema: z.undefined() },
} as const;

/**
 * A query parameter or form field as pages read it: a single string, cut to `max` characters; a
 * repeated one is absent. Pages are followed from links and typed into, so they are lenient where
 * the API refuses; characters Postgres cannot store are still refused (src/http/unstorable.ts).
 */
export const text = (max = 2048) =>
  z
    .unknown()
    .transform((v) => (typeof v === 'string' ? v.slice(0, max) : undefined))
    .optional();

/** A form: its fields as `text(4096)`, any other field allowed (and unread). */
export const form = <F extends string>(...fields: F[]) =>
  z.looseObject(Object.fromEntries(fields.map((f) => [f, text(4096)])) as Record<F, ReturnType<typeof text>>);

/** 303: the browser follows with a GET after a form's POST. */
export function seeOther(ctx: Context, url: string): undefined {
  ctx.status = 303;
  ctx.redirect(url);
  return undefined;
}

// /device (and /consent, its other name): the page where a user types or follows a device's
// code (RFC 8628 §3.3), signs in if needed, and is asked to allow it; the decision is consent.ts.
import { z } from 'zod';
import { checkCsrf } from '../../http/csrf.ts';
import { defineRoute } from '../../http/route.ts';
import { form, text } from '../../html/page-route.ts';
import { portalPage, showDevice } from '../page.ts';
import { csrfExample } from './form-post.ts';

export const devicePage = defineRoute({
  ...portalPage,
  method: 'get',
  path: '/device',
  operationId: 'devicePage',
  summary: "Connect a device: its code (verification_uri_complete fills it in), then the user's consent",
  description:
    "The page of RFC 8628's `verification_uri`: `user_code` (or `code`) in the query, as `verification_uri_complete` carries it, finds the pending device request; without one the page has a field to type the code. A signed-out user signs in first (password or social) and comes back here; a signed-in one sees the client's name, the account and the scopes with Allow and Deny, posted to /consent. An unknown or expired code shows the field again with the reason (404); misses count, and past 10 per browser or 50 per address in 15 minutes every lookup is a 429 page until the window passes.",
  query: z.looseObject({ user_code: text(), code: text() }),
  handle: ({ query, deps, ctx }) => showDevice(ctx, deps, query.user_code ?? query.code),
});

export const consentPage = defineRoute({
  ...portalPage,
  method: 'get',
  path: '/consent',
  operationId: 'consentPage',
  summary: 'The consent page of a device request (the same page as /device)',
  description:
    "The same page as /device for the device request `user_code` names: the sign-in page when signed out, else the client's name, the account and the scopes with Allow and Deny, posted to /consent. An unknown or expired code is a 404 page with a field to type it again; misses count toward /device's wrong-code limits (429 past them).",
  query: z.looseObject({ user_code: text() }),
  handle: ({ query, deps, ctx }) => showDevice(ctx, deps, query.user_code),
});

export const deviceCode = defineRoute({
  ...portalPage,
  method: 'post',
  path: '/device',
  operationId: 'deviceForm',
  summary: 'Look up the device request a typed code names',
  description:
    "Looks up the code a user typed on /device (case, spaces and the dash ignored) and answers as `GET /device?user_code=…` does: the sign-in page, the consent view, or the field again with the reason (404). Each miss counts toward the wrong-code limits (10 per browser, 50 per address in 15 minutes; past them a 429 page); a POST without the page's CSRF token is a 403 page.",
  example: { csrf: csrfExample, user_code: 'BDFG-HJKL' },
  body: form('csrf', 'user_code'),
  async handle({ body: f, deps, ctx }) {
    checkCsrf(ctx, deps.config, f.csrf);
    return showDevice(ctx, deps, f.user_code?.trim() || undefined);
  },
});

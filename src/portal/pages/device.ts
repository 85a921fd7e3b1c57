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
  query: z.looseObject({ user_code: text(), code: text() }),
  handle: ({ query, deps, ctx }) => showDevice(ctx, deps, query.user_code ?? query.code),
});

export const consentPage = defineRoute({
  ...portalPage,
  method: 'get',
  path: '/consent',
  operationId: 'consentPage',
  summary: 'The consent page of a device request (the same page as /device)',
  query: z.looseObject({ user_code: text() }),
  handle: ({ query, deps, ctx }) => showDevice(ctx, deps, query.user_code),
});

export const deviceCode = defineRoute({
  ...portalPage,
  method: 'post',
  path: '/device',
  operationId: 'deviceForm',
  summary: 'Look up the device request a typed code names',
  body: form('csrf', 'user_code'),
  example: { csrf: csrfExample, user_code: 'BDFG-HJKL' },
  async handle({ body: f, deps, ctx }) {
    checkCsrf(ctx, deps.config, f.csrf);
    return showDevice(ctx, deps, f.user_code?.trim() || undefined);
  },
});

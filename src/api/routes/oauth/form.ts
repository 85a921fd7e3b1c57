// What the OAuth endpoints share: their form parameters and the client's id. They speak RFC 6749's
// form-encoded bodies (§3.2) and error form (§5.2), so standard OAuth clients (openid-client's
// initiateDeviceAuthorization / pollDeviceAuthorizationGrant) work unchanged: routes declare
// `bodyType: 'form'` and `errors: 'oauth'` (src/http/route.ts).
import type { Context } from 'koa';
import { z } from 'zod';
import { OAuthError } from '../../../domain/oauth/errors.ts';

/** One form parameter: a repeated one is an error (RFC 6749 §3.1), and none is long. */
export const param = z
  .string({ error: (issue) => (issue.input === undefined ? undefined : 'must appear once') })
  .max(2048, 'is too long');

/** RFC 6749 §2.3.1: a public client may also send its id in HTTP Basic with an empty secret. */
export function clientIdOf(ctx: Context, formClientId: string | undefined): string | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(ctx.get('authorization'));
  const fromBasic = m ? decodeURIComponent(Buffer.from(m[1]!, 'base64').toString().split(':')[0] ?? '') : undefined;
  if (fromBasic && formClientId && fromBasic !== formClientId)
    throw new OAuthError('invalid_request', 'two different client ids');
  return fromBasic || formClientId;
}

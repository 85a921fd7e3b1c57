// The OAuth endpoints of the device authorization grant (RFC 8628), one file each.
import { deviceAuthorization } from './device-authorization.ts';
import { token } from './token.ts';

export const oauthRoutes = [deviceAuthorization, token];

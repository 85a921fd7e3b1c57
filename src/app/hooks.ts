// The route kernel's hooks (http/hooks.ts), answered by the feature code: API keys and their
// scopes and environment names are tenancy's, session bearers identity's, console sessions the
// console's, Sentry client keys error tracking's, and the OAuth endpoints' error form the OAuth
// routes'.
import { oauthErrors } from '../api/routes/oauth/errors.ts';
import { resolveConsole } from '../console/index.ts';
import { authenticateClientKey } from '../domain/errors/sentry/auth.ts';
import { sessionPrincipal } from '../api/routes/identity/session-auth.ts';
import { principalOf } from '../domain/tenancy/key-auth.ts';
import { secretScopes, type SecretScope } from '../domain/tenancy/keys.ts';
import { envName } from '../domain/tenancy/names.ts';
import type { KernelHooks } from '../http/hooks.ts';

export const kernelHooks: KernelHooks = {
  // A route's scope is one of secretScopes: the kernel refuses any other when it mounts the route.
  key: (deps, token, kind, scope) => principalOf(deps, token, kind, scope as SecretScope | undefined),
  clientKey: (deps, projectNumber, publicKey) => authenticateClientKey(deps.db, projectNumber, publicKey),
  session: sessionPrincipal,
  scopes: secretScopes,
  envName,
  console: resolveConsole,
  oauthErrors: oauthErrors(),
};

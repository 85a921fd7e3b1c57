// OAuth clients, registered by the operator with `cairn admin oauth-clients create` (docs/api.md "The operator CLI": the
// oauth_clients collection is not routed on the API). Device-grant clients are public (RFC 8628
// §3.1: the device cannot keep a secret), so there is no client secret.
import type { Knex } from 'knex';
import { AppError } from '../../app-error.ts';
import { newUlid } from '../../ids.ts';
import { type OAuthClientRow, insertClient } from './queries.ts';

export const grantTypes = { device_code: 'urn:ietf:params:oauth:grant-type:device_code' } as const;
export type GrantName = keyof typeof grantTypes;

/** RFC 6749 §3.3: scope-token = 1*NQCHAR. */
const scopeToken = /^[\x21\x23-\x5B\x5D-\x7E]{1,64}$/;

export function checkScopeTokens(scopes: readonly string[]): string[] {
  const bad = scopes.filter((s) => !scopeToken.test(s));
  if (bad.length > 0)
    throw new AppError(
      'invalid_request',
      `not a valid scope: ${bad.join(', ')} (RFC 6749 §3.3: printable ASCII, no spaces, quotes or backslashes)`,
    );
  return [...new Set(scopes)];
}

export async function createOAuthClient(
  db: Knex,
  envId: string,
  input: { name: string; grants: readonly string[]; scopes: readonly string[] },
): Promise<OAuthClientRow> {
  const name = input.name.trim();
  if (!name || name.length > 100)
    throw new AppError('invalid_request', 'the client name is 1 to 100 characters; users see it on the approval page');
  const unknown = input.grants.filter((g) => !(g in grantTypes));
  if (input.grants.length === 0 || unknown.length > 0)
    throw new AppError(
      'invalid_request',
      `unknown grant ${unknown.join(', ') || '(none)'}; supported: ${Object.keys(grantTypes).join(', ')}`,
    );
  return insertClient(db, {
    id: `cairn_client_${newUlid()}`,
    env_id: envId,
    name,
    grant_types: [...new Set(input.grants)],
    scopes: checkScopeTokens(input.scopes),
  });
}

export function clientResource(c: OAuthClientRow) {
  return {
    client_id: c.id,
    name: c.name,
    grant_types: c.grant_types,
    scopes: c.scopes,
    public: true,
    create_time: c.create_time.toISOString(),
    revoke_time: c.revoke_time?.toISOString() ?? null,
  };
}

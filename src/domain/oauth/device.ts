// The device authorization grant (RFC 8628). A program asks for a device code and a user code;
// the user approves on the Account Portal's /device page; the program polls the token endpoint
// and gets a session bearer as its access token. Device codes are stored as SHA-256 and redeemed
// once; the polling interval is enforced (§3.5 slow_down).
import type { Knex } from 'knex';
import type { Config } from '../../config.ts';
import { randomBase62, sha256 } from '../../crypto.ts';
import { AppError } from '../../app-error.ts';
import { newId } from '../../ids.ts';
import { usersQueries } from '../identity/users/queries.ts';
import { createSession, envIdentity, type SignInContext } from '../identity/sessions/sessions.ts';
import { grantTypes } from './clients.ts';
import { OAuthError } from './errors.ts';
import { assertMayGuess, countWrongGuess, type Guesser } from './limits.ts';
import {
  type DeviceRequest,
  clientById,
  decideDevice,
  insertDevice,
  pendingByUserCode,
  pollDevice,
} from './queries.ts';
import { formatUserCode, newUserCode, normaliseUserCode } from './user-code.ts';

export const deviceLifetimeSeconds = 600;
export const deviceInterval = 5;
/** Transit time a poll may lose against the interval before it counts as too fast. */
const pollSlackMs = 500;

const hashDeviceCode = (code: string): Buffer => sha256(`device:${code}`);

export interface DeviceAuthorizationAnswer {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

async function requireClient(db: Knex, clientId: string | undefined) {
  const client = clientId ? await clientById(db, clientId) : undefined;
  if (!client || client.revoke_time) throw new OAuthError('invalid_client', 'unknown or revoked client_id');
  if (!client.grant_types.includes('device_code'))
    throw new OAuthError('unauthorized_client', 'this client is not allowed the device authorization grant');
  return client;
}

/** §3.1–3.2. A requested scope must be within the client's; none asked means all of them. */
export async function startDeviceAuthorization(
  db: Knex,
  config: Config,
  input: { clientId?: string | undefined; scope?: string | undefined },
): Promise<DeviceAuthorizationAnswer> {
  const client = await requireClient(db, input.clientId);
  const asked = input.scope?.split(' ').filter(Boolean);
  const outside = asked?.filter((s) => !client.scopes.includes(s)) ?? [];
  if (outside.length > 0)
    throw new OAuthError('invalid_scope', `scope not allowed for this client: ${outside.join(' ')}`);
  const scopes = asked && asked.length > 0 ? [...new Set(asked)] : client.scopes;
  const deviceCode = `cairn_dvc_${randomBase62(32)}`;
  for (let attempt = 0; ; attempt++) {
    const userCode = newUserCode();
    const inserted = await insertDevice(db, {
      id: newId('dev'),
      env_id: client.env_id,
      client_id: client.id,
      device_code_hash: hashDeviceCode(deviceCode),
      user_code: userCode,
      scopes,
      interval_seconds: deviceInterval,
      lifetime_seconds: deviceLifetimeSeconds,
    });
    if (inserted) {
      const verification = `${config.CAIRN_BASE_URL}/device`;
      return {
        device_code: deviceCode,
        user_code: formatUserCode(userCode),
        verification_uri: verification,
        verification_uri_complete: `${verification}?user_code=${formatUserCode(userCode)}`,
        expires_in: deviceLifetimeSeconds,
        interval: deviceInterval,
      };
    }
    // A pending request already holds this user code (one in ~10^10): draw another.
    if (attempt > 5)
      throw new OAuthError('temporarily_unavailable', 'could not allocate a user code; retry', {
        status: 503,
        retryAfter: 1,
      });
  }
}

export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

/** §3.4–3.5: one poll. Redeeming and creating the session commit together. */
export async function pollDeviceToken(
  db: Knex,
  input: { clientId?: string | undefined; deviceCode?: string | undefined; from: SignInContext },
): Promise<TokenAnswer> {
  const client = await requireClient(db, input.clientId);
  if (!input.deviceCode) throw new OAuthError('invalid_request', 'device_code is required');
  const deviceCode = input.deviceCode;
  // The poll's own writes (last poll time, a grown interval) must commit even when it is refused,
  // so the refusal is returned out of the transaction and thrown after it commits.
  const outcome = await db.transaction(async (trx): Promise<TokenAnswer | OAuthError> => {
    const row = await pollDevice(trx, client.id, hashDeviceCode(deviceCode), pollSlackMs);
    if (!row) return new OAuthError('invalid_grant', 'unknown device_code for this client');
    if (row.previous_state === 'redeemed') return new OAuthError('invalid_grant', 'this device_code was already used');
    if (row.too_fast)
      return new OAuthError('slow_down', `poll no more often than every ${row.interval_seconds} seconds`);
    if (row.expired) return new OAuthError('expired_token', 'the device_code expired; start again');
    if (row.previous_state === 'denied') return new OAuthError('access_denied', 'the user denied the request');
    if (row.previous_state === 'pending')
      return new OAuthError('authorization_pending', 'the user has not approved the request yet');
    const env = await envIdentity(trx, row.env_id);
    const user = row.end_user_id ? await usersQueries(trx).userById(row.env_id, row.end_user_id) : undefined;
    // Throwing here rolls the redeem back too: the user is gone, nothing is spent.
    if (!user) throw new OAuthError('invalid_grant', 'the approving user no longer exists');
    // Locking denies approvals not yet collected; one that raced it is refused the same way.
    if (user.locked_time) return new OAuthError('access_denied', 'the user is locked');
    const { session, token } = await createSession(trx, env, user.id, 'device', input.from);
    await usersQueries(trx).insertSignIn({
      env_id: row.env_id,
      end_user_id: user.id,
      method: 'device',
      outcome: 'succeeded',
      ip: input.from.ip,
      user_agent: input.from.userAgent,
    });
    const expiresIn = Math.max(0, Math.floor((session.expire_time.getTime() - Date.now()) / 1000));
    return { access_token: token, token_type: 'Bearer' as const, expires_in: expiresIn, scope: row.scopes.join(' ') };
  });
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
}

export function isDeviceGrant(grantType: string | undefined): boolean {
  return grantType === grantTypes.device_code;
}

/**
 * The portal's lookup of a typed code. A code that cannot exist is refused without a query;
 * a well-formed miss counts toward the wrong-entry limits.
 */
export async function findDeviceRequest(db: Knex, input: string, who: Guesser): Promise<DeviceRequest> {
  await assertMayGuess(db, who);
  const code = normaliseUserCode(input);
  const found = code ? await pendingByUserCode(db, code) : undefined;
  if (!found) {
    await countWrongGuess(db, who);
    throw new AppError('not_found', 'that code is not valid or has expired; check it and try again');
  }
  return found;
}

export async function decideDeviceRequest(
  db: Knex,
  request: DeviceRequest,
  endUserId: string,
  approve: boolean,
): Promise<void> {
  if (!(await decideDevice(db, request.id, request.env_id, endUserId, approve))) {
    throw new AppError('conflict', 'this request was already answered or has expired');
  }
}

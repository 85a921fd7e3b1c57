// SQL for OAuth clients and device authorizations. Every state change is one conditional UPDATE,
// so a device code is redeemed once and a request is decided once, whatever races.
import type { Db } from '../../db.ts';

export interface OAuthClientRow {
  id: string;
  env_id: string;
  name: string;
  grant_types: string[];
  scopes: string[];
  create_time: Date;
  revoke_time: Date | null;
}

export type DeviceState = 'pending' | 'approved' | 'denied' | 'redeemed';

export interface DeviceRow {
  id: string;
  env_id: string;
  client_id: string;
  user_code: string;
  scopes: string[];
  state: DeviceState;
  end_user_id: string | null;
  interval_seconds: number;
  expire_time: Date;
}

/** A pending request as the portal shows it: with its client's name. */
export interface DeviceRequest extends DeviceRow {
  client_name: string;
}

const deviceColumns = [
  'id',
  'env_id',
  'client_id',
  'user_code',
  'scopes',
  'state',
  'end_user_id',
  'interval_seconds',
  'expire_time',
] as const;

export interface PollResult extends DeviceRow {
  /** The interval was not respected: the poll is refused and the interval grows by 5 s. */
  too_fast: boolean;
  expired: boolean;
  previous_state: DeviceState;
}

/** Device requests a day after they expired (the daily identity.prune). */
export async function pruneDeviceRequests(db: Db): Promise<number> {
  return db('device_authorizations').where('expire_time', '<', db.raw(`now() - interval '1 day'`)).delete();
}

export async function insertClient(
  db: Db,
  row: Omit<OAuthClientRow, 'create_time' | 'revoke_time'>,
): Promise<OAuthClientRow> {
  const [client] = await db('oauth_clients').insert(row).returning('*');
  return client as OAuthClientRow;
}

export async function clientById(db: Db, id: string): Promise<OAuthClientRow | undefined> {
  return db('oauth_clients').where({ id }).first();
}

export async function listClients(db: Db, envId: string): Promise<OAuthClientRow[]> {
  return db('oauth_clients').where({ env_id: envId }).orderBy('id');
}

export async function insertDevice(
  db: Db,
  row: {
    id: string;
    env_id: string;
    client_id: string;
    device_code_hash: Buffer;
    user_code: string;
    scopes: string[];
    interval_seconds: number;
    lifetime_seconds: number;
  },
): Promise<boolean> {
  const { lifetime_seconds, ...rest } = row;
  const result = await db.raw<{ rowCount: number }>(
    `insert into device_authorizations (id, env_id, client_id, device_code_hash, user_code, scopes, interval_seconds, expire_time)
       values (?, ?, ?, ?, ?, ?, ?, now() + make_interval(secs => ?))
       on conflict (user_code) where state = 'pending' do nothing`,
    [
      rest.id,
      rest.env_id,
      rest.client_id,
      rest.device_code_hash,
      rest.user_code,
      rest.scopes,
      rest.interval_seconds,
      lifetime_seconds,
    ],
  );
  return result.rowCount === 1;
}

/**
 * One poll of the token endpoint, in one statement: stamps last_poll_time, and when the client
 * came back sooner than the interval (less a little transit slack), grows the interval by 5 s
 * for this and later polls (RFC 8628 §3.5). An approved request turns redeemed here, once.
 */
export async function pollDevice(
  db: Db,
  clientId: string,
  deviceCodeHash: Buffer,
  slackMs: number,
): Promise<PollResult | undefined> {
  const result = await db.raw<{ rows: PollResult[] }>(
    `with cur as (
         select id, state as previous_state, (last_poll_time is not null and now() - last_poll_time < make_interval(secs => interval_seconds) - make_interval(secs => ? / 1000.0)) as too_fast,
                expire_time <= now() as expired
           from device_authorizations where device_code_hash = ? and client_id = ? for update
       )
       update device_authorizations d set
         last_poll_time = now(),
         interval_seconds = d.interval_seconds + case when cur.too_fast then 5 else 0 end,
         state = case when d.state = 'approved' and not cur.too_fast and not cur.expired then 'redeemed' else d.state end,
         redeem_time = case when d.state = 'approved' and not cur.too_fast and not cur.expired then now() else d.redeem_time end
       from cur where d.id = cur.id
       returning ${deviceColumns.map((c) => `d.${c}`).join(', ')}, cur.too_fast, cur.expired, cur.previous_state`,
    [slackMs, deviceCodeHash, clientId],
  );
  return result.rows[0];
}

/** A pending, unexpired request by user code, across the service (the portal has no other key). */
export async function pendingByUserCode(db: Db, userCode: string): Promise<DeviceRequest | undefined> {
  return db('device_authorizations as d')
    .join('oauth_clients as c', 'c.id', 'd.client_id')
    .where({ 'd.user_code': userCode, 'd.state': 'pending' })
    .where('d.expire_time', '>', db.fn.now())
    .whereNull('c.revoke_time')
    .first(...deviceColumns.map((c) => `d.${c}`), 'c.name as client_name');
}

/** The user's approvals no device has collected yet become denials (the user was signed out everywhere). */
export async function denyUncollected(db: Db, endUserId: string): Promise<number> {
  return db('device_authorizations')
    .where({ end_user_id: endUserId, state: 'approved' })
    .update({ state: 'denied', decide_time: db.fn.now() });
}

/** Approve or deny, once, by a user of the request's own environment. */
export async function decideDevice(
  db: Db,
  id: string,
  envId: string,
  endUserId: string,
  approve: boolean,
): Promise<boolean> {
  const n = await db('device_authorizations')
    .where({ id, env_id: envId, state: 'pending' })
    .where('expire_time', '>', db.fn.now())
    .update({ state: approve ? 'approved' : 'denied', end_user_id: endUserId, decide_time: db.fn.now() });
  return n === 1;
}

// SQL for an environment's webhook endpoints: every query is scoped by the environment.
import type { Db } from '../../../db.ts';

export type EndpointState = 'enabled' | 'disabled';

export interface EndpointRow {
  id: string;
  env_id: string;
  url: string;
  event_types: string[];
  description: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expire_time: Date | null;
  state: EndpointState;
  disabled_reason: string | null;
  failing_since: Date | null;
  last_failure_time: Date | null;
  /** Its attempts wait in the slow lane (outbox/emit.ts enqueueAttempts). */
  slow: boolean;
  /** Attempts in a row answered 2xx within a second while slow (deliveries/lanes.ts). */
  quick_successes: number;
  create_time: Date;
  update_time: Date;
}

const endpoints = (db: Db) => db<EndpointRow>('webhook_endpoints');

export async function insertEndpoint(
  db: Db,
  row: Pick<EndpointRow, 'id' | 'env_id' | 'url' | 'event_types' | 'description' | 'secret_sealed'>,
): Promise<EndpointRow> {
  const [created] = await endpoints(db).insert(row).returning('*');
  return created!;
}

export async function findEndpoint(db: Db, envId: string, id: string): Promise<EndpointRow | undefined> {
  return endpoints(db).where({ env_id: envId, id }).first();
}

export async function findEndpointForUpdate(db: Db, envId: string, id: string): Promise<EndpointRow | undefined> {
  return endpoints(db).where({ env_id: envId, id }).forUpdate().first();
}

export async function countEndpoints(db: Db, envId: string): Promise<number> {
  const row = await endpoints(db).where({ env_id: envId }).count<{ n: string }[]>('* as n').first();
  return Number(row?.n ?? 0);
}

/** Oldest first, after `after` (an id). */
export async function listEndpoints(
  db: Db,
  envId: string,
  after: string | undefined,
  limit: number,
): Promise<EndpointRow[]> {
  const q = endpoints(db).where({ env_id: envId }).orderBy('id').limit(limit);
  if (after) q.where('id', '>', after);
  return q;
}

export async function patchEndpoint(
  db: Db,
  envId: string,
  id: string,
  patch: Partial<EndpointRow>,
): Promise<EndpointRow | undefined> {
  const [row] = await endpoints(db)
    .where({ env_id: envId, id })
    .update({ ...patch, update_time: db.fn.now() } as unknown as Partial<EndpointRow>)
    .returning('*');
  return row;
}

/**
 * Deletes an endpoint and, by cascade, its deliveries and attempts. Run in a transaction: the
 * endpoint's row, then its deliveries in seq order, are locked first, the order an attempt's
 * settling takes them in (deliveries/deliver.ts), so a delete and a settle never deadlock.
 */
export async function removeEndpoint(db: Db, envId: string, id: string): Promise<boolean> {
  const found = await endpoints(db).where({ env_id: envId, id }).forUpdate().first('id');
  if (!found) return false;
  await db.raw('select 1 from webhook_deliveries where endpoint_id = ? order by seq for update', [id]);
  return (await endpoints(db).where({ env_id: envId, id }).delete()) > 0;
}

// SQL of download links: whether the API key that asked for a link may still read backups.
import type { Knex } from 'knex';

/** Whether API key `keyId` is unrevoked, of `envId`, and may read backups. */
export async function keyMayRead(db: Knex, keyId: string, envId: string): Promise<boolean> {
  const row = await db('api_keys')
    .where({ id: keyId, env_id: envId })
    .whereNull('revoke_time')
    .whereRaw("'backups:read' = any(scopes)")
    .first('id');
  return row !== undefined;
}

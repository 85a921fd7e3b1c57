// Scrubbing policies per environment (docs/api.md): an environment without a row has the default
// policy, which is on.
import type { Db } from '../../../db.ts';
import { scrubbingPolicy, type ScrubbingPolicy } from '../../../contract/scrubbing.ts';
import { defaultPolicy } from './scrub.ts';

export function scrubbingQueries(db: Db) {
  return {
    async policy(envId: string): Promise<{ policy: ScrubbingPolicy; update_time: Date | null }> {
      const row = await db('error_scrubbing_policies').where({ env_id: envId }).first('policy', 'update_time');
      return row
        ? { policy: scrubbingPolicy.parse(row.policy), update_time: row.update_time }
        : { policy: defaultPolicy, update_time: null };
    },

    /** Policies of several environments at once (one query per worker batch). */
    /**
     * Each environment's policy (the default where none was set). An environment that no longer
     * exists has no entry: the worker drops its events (intake/ingest.ts), with no query of its own.
     */
    async policies(envIds: string[]): Promise<Map<string, ScrubbingPolicy>> {
      const rows: { env_id: string; policy: unknown }[] = await db('envs as e')
        .leftJoin('error_scrubbing_policies as p', 'p.env_id', 'e.id')
        .whereIn('e.id', envIds)
        .select('e.id as env_id', 'p.policy');
      return new Map(rows.map((r) => [r.env_id, r.policy == null ? defaultPolicy : scrubbingPolicy.parse(r.policy)]));
    },

    async put(envId: string, policy: ScrubbingPolicy): Promise<Date> {
      const { rows } = await db.raw<{ rows: { update_time: Date }[] }>(
        `insert into error_scrubbing_policies (env_id, policy, update_time) values (?, ?::jsonb, now())
         on conflict (env_id) do update set policy = excluded.policy, update_time = excluded.update_time
         returning update_time`,
        [envId, JSON.stringify(policy)],
      );
      return rows[0]!.update_time;
    },
  };
}

// SQL for sentry-cli's uploads: the chunks an environment holds (by SHA-1) and the assemblies of
// the artifact bundles made of them.
import type { Db } from '../../../../db.ts';

/**
 * How long a failed assembly answers `error` to whoever asks for it again (Sentry keeps an
 * assembly's state 10 minutes, so a client that polls sees the error and the detail); asked for
 * after that, it is tried anew.
 */
export const failedAssemblyHeldSeconds = 600;

export interface AssemblyRow {
  env_id: string;
  checksum: string;
  chunks: string[];
  release: string | null;
  dist: string | null;
  state: 'created' | 'ok' | 'error';
  detail: string | null;
  /** `error` within the last `failedAssemblyHeldSeconds`: the answer, not yet to be retried. */
  error_held: boolean;
}

export function bundleQueries(db: Db) {
  return {
    /** Records chunks stored in the object store (again is fine: the same SHA-1 is the same bytes). */
    async addChunks(envId: string, chunks: { sha1: string; size_bytes: number }[]): Promise<void> {
      if (chunks.length === 0) return;
      await db('sentry_chunks')
        .insert(chunks.map((c) => ({ env_id: envId, ...c })))
        .onConflict(['env_id', 'sha1'])
        .merge({ create_time: db.fn.now() });
    },

    /** Of these SHA-1s, those the environment does not hold. */
    async missingChunks(envId: string, sha1s: string[]): Promise<string[]> {
      const held = new Set(
        (await db('sentry_chunks').where({ env_id: envId }).whereIn('sha1', sha1s).pluck('sha1')) as string[],
      );
      return [...new Set(sha1s)].filter((s) => !held.has(s));
    },

    async dropChunks(chunks: readonly { env_id: string; sha1: string }[]): Promise<void> {
      if (chunks.length === 0) return;
      await db('sentry_chunks')
        .whereIn(
          ['env_id', 'sha1'],
          chunks.map((c) => [c.env_id, c.sha1]),
        )
        .delete();
    },

    /** Chunks uploaded before `before`, oldest first. */
    async staleChunks(before: Date, limit: number): Promise<{ env_id: string; sha1: string }[]> {
      return db('sentry_chunks')
        .where('create_time', '<', before)
        .orderBy('create_time')
        .limit(limit)
        .select('env_id', 'sha1');
    },

    async assembly(envId: string, checksum: string): Promise<AssemblyRow | undefined> {
      return db('artifact_bundle_assemblies')
        .where({ env_id: envId, checksum })
        .first(
          '*',
          db.raw("state = 'error' and update_time > now() - make_interval(secs => ?) as error_held", [
            failedAssemblyHeldSeconds,
          ]),
        );
    },

    /** The assembly as it is, or a new one in `created`; answers the row and whether it is new. */
    async startAssembly(
      row: Omit<AssemblyRow, 'state' | 'detail' | 'error_held'>,
    ): Promise<{ row: AssemblyRow; created: boolean }> {
      const inserted = (await db('artifact_bundle_assemblies')
        .insert({ ...row, state: 'created' })
        .onConflict(['env_id', 'checksum'])
        .ignore()
        .returning('*')) as AssemblyRow[];
      if (inserted[0]) return { row: { ...inserted[0], error_held: false }, created: true };
      return { row: (await this.assembly(row.env_id, row.checksum))!, created: false };
    },

    /** A failed assembly asked for again after the hold: tried anew. Answers whether this call restarted it. */
    async restartAssembly(envId: string, checksum: string): Promise<boolean> {
      const n = await db('artifact_bundle_assemblies')
        .where({ env_id: envId, checksum, state: 'error' })
        .where('update_time', '<=', db.raw('now() - make_interval(secs => ?)', [failedAssemblyHeldSeconds]))
        .update({ state: 'created', detail: null, update_time: db.fn.now() });
      return n > 0;
    },

    async finishAssembly(envId: string, checksum: string, state: 'ok' | 'error', detail: string | null): Promise<void> {
      await db('artifact_bundle_assemblies')
        .where({ env_id: envId, checksum })
        .update({ state, detail, update_time: db.fn.now() });
    },
  };
}

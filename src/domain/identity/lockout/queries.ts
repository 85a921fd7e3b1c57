// Lockout counters per identifier: every password check is reserved before it runs.
import type { Db } from '../../../db.ts';

export function lockoutQueries(db: Db) {
  return {
    /** Consecutive failures counted so far, and seconds left of a lockout (0 = not locked). */
    /**
     * Reserves one check of the identifier, in a single statement, before any password is hashed:
     * `pending` goes up at once, so concurrent requests across web processes each see the ones
     * before them. Refused (`reserved: false`) while locked, or while failed and pending checks
     * already make the threshold. A lock that has run out starts a fresh count; reservations
     * older than a minute (a process that died mid-check) are dropped. Answers whether this check
     * may run and, if not, for how long to wait.
     */
    async reserveAttempt(
      envId: string,
      identifierHash: Buffer,
      threshold: number,
      lockSeconds: number,
    ): Promise<{ reserved: boolean; waitSeconds: number }> {
      // One statement: the row is locked (FOR UPDATE waits for a concurrent reservation and then
      // reads what it left), the decision taken on it and written back. Concurrent reservations
      // of one identifier thus queue on the row, each deciding on the count the one before left.
      const reserve = () =>
        db.raw<{ rows: { reserved: boolean; failures: number; locked_seconds: number }[] }>(
          `with old as (
           select case when locked_until is not null and locked_until <= now() then 0 else failures end as failures,
                  case when update_time < now() - interval '1 minute' then 0 else pending end as pending,
                  case when locked_until > now() then locked_until end as locked_until
             from identity_lockouts where env_id = ? and identifier_hash = ? for update
         ), decided as (
           select failures, pending, locked_until, locked_until is null and failures + pending < ? as reserved from old
         ), written as (
           update identity_lockouts l
              set failures = d.failures, pending = d.pending + d.reserved::int, locked_until = d.locked_until, update_time = now()
             from decided d where l.env_id = ? and l.identifier_hash = ?
           returning 1
         )
         select reserved, failures, coalesce(ceil(extract(epoch from locked_until - now()))::int, 0) as locked_seconds,
                (select count(*) from written) as written
           from decided`,
          [envId, identifierHash, threshold, envId, identifierHash],
        );
      let result = await reserve();
      // The identifier's first check: make its row, then reserve on it (rows are reset, not
      // deleted, on success; only the daily prune deletes idle ones).
      for (let attempt = 0; result.rows.length === 0 && attempt < 3; attempt++) {
        await db('identity_lockouts')
          .insert({ env_id: envId, identifier_hash: identifierHash, failures: 0, pending: 0 })
          .onConflict(['env_id', 'identifier_hash'])
          .ignore();
        result = await reserve();
      }
      const row = result.rows[0];
      if (!row) throw new Error('the lockout row of this identifier could not be reserved');
      if (row.reserved) return { reserved: true, waitSeconds: 0 };
      // Refused for checks still in flight rather than failures: they end within a second or
      // two, and then the identifier is either locked or free again.
      return {
        reserved: false,
        waitSeconds: row.locked_seconds > 0 ? row.locked_seconds : row.failures >= threshold ? lockSeconds : 2,
      };
    },

    /** A reserved check failed: it counts; reaching the threshold locks the identifier. Answers the seconds locked (0 = not). */
    async failReserved(envId: string, identifierHash: Buffer, threshold: number, lockSeconds: number): Promise<number> {
      const result = await db.raw<{ rows: { seconds: number }[] }>(
        `update identity_lockouts set
           pending = greatest(pending - 1, 0),
           failures = failures + 1,
           locked_until = coalesce(locked_until, case when failures + 1 >= ? then now() + make_interval(secs => ?) end),
           update_time = now()
         where env_id = ? and identifier_hash = ?
         returning coalesce(ceil(extract(epoch from locked_until - now()))::int, 0) as seconds`,
        [threshold, lockSeconds, envId, identifierHash],
      );
      return Math.max(0, result.rows[0]?.seconds ?? 0);
    },

    /** A reserved check that was neither a failure nor a sign-in (the password right, a factor or verification still due): not counted. */
    async releaseReserved(envId: string, identifierHash: Buffer): Promise<void> {
      await db('identity_lockouts')
        .where({ env_id: envId, identifier_hash: identifierHash })
        .update({ pending: db.raw('greatest(pending - 1, 0)'), update_time: db.fn.now() });
    },

    /** A success: the count starts afresh and its own reservation is given back. Reset, not deleted, so a concurrent reservation always finds the row it locks. */
    async clearFailures(envId: string, identifierHash: Buffer): Promise<void> {
      await db('identity_lockouts')
        .where({ env_id: envId, identifier_hash: identifierHash })
        .update({
          failures: 0,
          pending: db.raw('greatest(pending - 1, 0)'),
          locked_until: null,
          update_time: db.fn.now(),
        });
    },
  };
}

// Lockout counters per identifier: every password check is reserved before it runs. The row holds
// the failures counted and the checks in flight (`checks`: check id → expiry, epoch seconds).
import type { Db } from '../../../db.ts';

export interface Reservation {
  reserved: boolean;
  /** Seconds left of a lock (0 = not locked). Refused and not locked: checks in flight fill the budget. */
  lockedSeconds: number;
}

/**
 * Reserves check `checkId` of the identifier, in a single statement, before any password is
 * hashed, so concurrent requests across web processes each see the ones before them. Refused
 * while locked, or while failures and live checks already make the threshold. A lock that has
 * run out starts a fresh count; a check whose expiry has passed (its process died mid-check)
 * no longer counts. A refusal that changes nothing writes nothing, so a waiting check may ask
 * again often.
 */
export async function reserveAttempt(
  db: Db,
  envId: string,
  identifierHash: Buffer,
  checkId: string,
  limits: { threshold: number; lockSeconds: number; checkSeconds: number },
): Promise<Reservation> {
  // The row is locked (FOR UPDATE waits for a concurrent reservation or settlement and then
  // reads what it left), the decision taken on it and written back in the same statement, so
  // concurrent reservations of one identifier queue on the row, each deciding on what the one
  // before left.
  const reserve = () =>
    db.raw<{ rows: { reserved: boolean; failures: number; locked_seconds: number }[] }>(
      `with old as (
         select failures, locked_until, checks
           from identity_lockouts where env_id = ? and identifier_hash = ? for update
       ), live as (
         select case when locked_until <= now() then 0 else failures end as failures,
                case when locked_until > now() then locked_until end as locked_until,
                coalesce((select jsonb_object_agg(e.key, e.value) from jsonb_each(checks) e
                           where (e.value)::float8 > extract(epoch from now())), '{}'::jsonb) as checks,
                failures as old_failures, locked_until as old_locked_until, checks as old_checks
           from old
       ), decided as (
         select live.*, locked_until is null and failures < ?
                and failures + (select count(*) from jsonb_object_keys(live.checks)) < ? as reserved
           from live
       ), written as (
         update identity_lockouts l
            set failures = d.failures, locked_until = d.locked_until, update_time = now(),
                checks = case when d.reserved
                              then d.checks || jsonb_build_object(?::text, extract(epoch from now()) + ?)
                              else d.checks end
           from decided d
          where l.env_id = ? and l.identifier_hash = ?
            and (d.reserved or d.checks <> d.old_checks or d.failures <> d.old_failures
                 or d.locked_until is distinct from d.old_locked_until)
       )
       select reserved, failures, coalesce(ceil(extract(epoch from locked_until - now()))::int, 0) as locked_seconds
         from decided`,
      [envId, identifierHash, limits.threshold, limits.threshold, checkId, limits.checkSeconds, envId, identifierHash],
    );
  let result = await reserve();
  // The identifier's first check: make its row, then reserve on it (rows are reset, not
  // deleted, on success; only the daily prune deletes idle ones).
  for (let attempt = 0; result.rows.length === 0 && attempt < 3; attempt++) {
    await db('identity_lockouts')
      .insert({ env_id: envId, identifier_hash: identifierHash, failures: 0 })
      .onConflict(['env_id', 'identifier_hash'])
      .ignore();
    result = await reserve();
  }
  const row = result.rows[0];
  if (!row) throw new Error('the lockout row of this identifier could not be reserved');
  const lockedSeconds =
    row.locked_seconds > 0 ? row.locked_seconds : row.failures >= limits.threshold ? limits.lockSeconds : 0;
  return { reserved: row.reserved, lockedSeconds: row.reserved ? 0 : lockedSeconds };
}

/**
 * What a waiting check looks at between reservations: a plain read, which takes no row lock,
 * so waiters never hold up the reservations and settlements they wait for.
 */
export async function lockoutState(
  db: Db,
  envId: string,
  identifierHash: Buffer,
): Promise<{ failures: number; lockedSeconds: number; inFlight: number }> {
  const result = await db.raw<{ rows: { failures: number; locked_seconds: number; in_flight: number }[] }>(
    `select case when locked_until <= now() then 0 else failures end as failures,
              coalesce(ceil(extract(epoch from locked_until - now()))::int, 0) as locked_seconds,
              (select count(*)::int from jsonb_each(checks) e
                where (e.value)::float8 > extract(epoch from now())) as in_flight
         from identity_lockouts where env_id = ? and identifier_hash = ?`,
    [envId, identifierHash],
  );
  const row = result.rows[0];
  return {
    failures: row?.failures ?? 0,
    lockedSeconds: Math.max(0, row?.locked_seconds ?? 0),
    inFlight: row?.in_flight ?? 0,
  };
}

/** Reserved check `checkId` failed: it counts; reaching the threshold locks the identifier. Answers the seconds locked (0 = not). */
export async function failReserved(
  db: Db,
  envId: string,
  identifierHash: Buffer,
  checkId: string,
  limits: { threshold: number; lockSeconds: number },
): Promise<number> {
  const result = await db.raw<{ rows: { seconds: number }[] }>(
    `update identity_lockouts set
         checks = checks - ?::text,
         failures = failures + 1,
         locked_until = coalesce(locked_until, case when failures + 1 >= ? then now() + make_interval(secs => ?) end),
         update_time = now()
       where env_id = ? and identifier_hash = ?
       returning coalesce(ceil(extract(epoch from locked_until - now()))::int, 0) as seconds`,
    [checkId, limits.threshold, limits.lockSeconds, envId, identifierHash],
  );
  return Math.max(0, result.rows[0]?.seconds ?? 0);
}

/** Reserved check `checkId` was neither a failure nor a sign-in (the password right, a factor or verification still due): not counted. */
export async function releaseReserved(db: Db, envId: string, identifierHash: Buffer, checkId: string): Promise<void> {
  await db('identity_lockouts')
    .where({ env_id: envId, identifier_hash: identifierHash })
    .update({ checks: db.raw('checks - ?::text', [checkId]), update_time: db.fn.now() });
}

/** A success: the count starts afresh and its own check is given back. Reset, not deleted, so a concurrent reservation always finds the row it locks. */
export async function clearFailures(db: Db, envId: string, identifierHash: Buffer, checkId: string): Promise<void> {
  await db('identity_lockouts')
    .where({ env_id: envId, identifier_hash: identifierHash })
    .update({
      failures: 0,
      checks: db.raw('checks - ?::text', [checkId]),
      locked_until: null,
      update_time: db.fn.now(),
    });
}

/** Lockout counts untouched for a day. */
export async function pruneLockouts(db: Db): Promise<number> {
  return db('identity_lockouts')
    .where('update_time', '<', db.raw(`now() - make_interval(days => ?)`, [1]))
    .delete();
}

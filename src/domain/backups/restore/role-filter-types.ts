// The shapes of the restore's role filter (role-filter.ts): its options, what it left out, and its
// state across statements. Types only, so the filter's source stays whole for the zlib child.

export interface RoleFilterOptions {
  /** Every role at the target → whether the restoring role can act as it (superuser or member). */
  roles: Record<string, boolean>;
  superuser: boolean;
  /** The restoring role itself. */
  current: string;
  /**
   * Random per restore: in the warning a refused guarded owner change raises, so that a tenant's
   * own function raising a WARNING during the restore cannot pass for one (owner-warnings.ts).
   */
  nonce?: string;
  /**
   * How many owner changes of large objects to other roles the restore may keep: each takes a
   * lock held until COMMIT, in a lock table of max_locks_per_transaction × (max_connections +
   * max_prepared_transactions) slots shared by the whole server; past it, they are left out and
   * reported. Absent: no limit.
   */
  largeObjectOwners?: number;
}

export interface Skipped {
  statements: number;
  roles: string[];
}

export interface RoleFilter {
  push(chunk: Buffer): Buffer[];
  end(): Buffer[];
  skipped(): Skipped;
}

export type RfToken = { k: 'word' | 'ident' | 'str' | 'punct'; v: string };

/** The filter's state across statements. */
export interface RfState {
  options: RoleFilterOptions;
  roles: Map<string, boolean>;
  named: Set<string>;
  count: number;
  entry: { type: string; line: string };
  sessionSkipped: boolean;
  /**
   * An owner change to a role the restorer is a member of, but not a superuser: PostgreSQL also
   * wants that role to have CREATE on the schema (or database), which the dump may not give it
   * until its ACLs at the end. Such a change runs in a block that turns a refusal into a warning
   * psql prints (replay.ts counts them into the skipped), instead of failing the restore.
   */
  guarded: string | null;
  largeObjectOwners: number;
  /** What a left-out statement was, for its comment: fixed words, never the statement's own text. */
  kind: string;
  /** The statement left out is a no-op, not something lost: not counted. */
  silent: boolean;
}

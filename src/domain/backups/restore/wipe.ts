// What a restore runs first, in its own transaction, before the dump.
import { xidMarker } from './replay.ts';

/**
 * Runs first in the restore's transaction: the target is replaced, not merged into. It prints the
 * transaction's id first (replay.ts reads it from psql's stderr), so the worker can record it
 * before it lets COMMIT through. `public` is then made again as a new database has it, because
 * pg_dump writes only how the source's `public` differs from that (pg_dump.c, dumpNamespace and
 * the "public" special case of 15+): PostgreSQL 15+ owner pg_database_owner with USAGE for PUBLIC
 * (ACL {pg_database_owner=UC/pg_database_owner,=U/pg_database_owner}), before 15 CREATE and USAGE
 * for PUBLIC, and the comment "standard public schema". A database's owner may do all of it
 * without being a superuser: it is a member of pg_database_owner. A role that is not (it has
 * CREATE on the database and owned the old `public`) may not give the schema to
 * pg_database_owner, so keeps it: the restore succeeds with `public` owned by the restoring role,
 * and a drill names that owner as a difference.
 *
 * Large objects: lo_unlink takes a lock on each, held until COMMIT (inv_drop → performDeletion);
 * a target holding more than the server's lock table (max_locks_per_transaction ×
 * (max_connections + max_prepared_transactions)) cannot be wiped in one transaction, and the
 * restore fails with "out of shared memory", changing nothing. No cheaper way is open to a role
 * that is not a superuser (pg_largeobject_metadata is not writable by it).
 */
export const wipePreamble = `BEGIN;
SELECT txid_current() AS cairn_xid \\gset
\\warn ${xidMarker}:cairn_xid
DO $cairn_restore$
DECLARE s record;
BEGIN
  FOR s IN SELECT nspname FROM pg_namespace
           WHERE nspname NOT IN ('pg_catalog', 'information_schema') AND nspname NOT LIKE 'pg\\_%'
  LOOP
    EXECUTE format('DROP SCHEMA %I CASCADE', s.nspname);
  END LOOP;
  PERFORM lo_unlink(oid) FROM pg_largeobject_metadata;
  CREATE SCHEMA public;
  IF current_setting('server_version_num')::int >= 150000 THEN
    IF pg_has_role(current_user, 'pg_database_owner', 'MEMBER') THEN
      ALTER SCHEMA public OWNER TO pg_database_owner;
    END IF;
    GRANT USAGE ON SCHEMA public TO PUBLIC;
  ELSE
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
      EXECUTE format('ALTER SCHEMA public OWNER TO %I', (SELECT rolname FROM pg_roles WHERE oid = 10));
    END IF;
    GRANT ALL ON SCHEMA public TO PUBLIC;
  END IF;
  COMMENT ON SCHEMA public IS 'standard public schema';
END
$cairn_restore$;
`;

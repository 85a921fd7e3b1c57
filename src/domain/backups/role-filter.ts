// A dump names roles: owners (`ALTER … OWNER TO r;`), grantees (`GRANT … TO r;`, `REVOKE … FROM
// r;`), default privileges (`ALTER DEFAULT PRIVILEGES FOR ROLE r … TO g;`) and grantors (`SET
// SESSION AUTHORIZATION r;`). Restored elsewhere, a role may not exist, or the restoring role may
// not act as it (PostgreSQL: ALTER … OWNER TO needs the restorer to be a member of the new owner,
// ALTER DEFAULT PRIVILEGES FOR ROLE too, SET SESSION AUTHORIZATION a superuser), and one such
// statement would fail, and so roll back, the whole restore. This filter turns exactly those
// statements into SQL comments and counts them: the object then stays owned by the restoring
// role (what `pg_dump --no-owner` gave) and the missing grant is reported, not silently lost.
// A left-out statement becomes a comment of fixed words, never its own text: PostgreSQL's and
// psql's scanners end a `--` comment at \r as well as \n (scan.l, psqlscan.l: non_newline), so a
// name holding one would run what follows it. The roles go out through skipped().
//
// A role the target lacks cannot own anything, for a superuser either. An owner change to the
// restoring role itself is a no-op (it created the object) and is left out uncounted: a large
// object's takes a lock held until COMMIT, and a dump may hold tens of thousands of them.
//
// Reading statements with certainty. The script is split into whole statements as PostgreSQL's
// scanner reads it, COPY rows passed by unread (sql-statements.ts). A statement's leading comments
// (outside any string, so pg_dump's own) hold pg_dump's TOC header (`-- Name: …; Type: ACL;
// Schema: …; Owner: …`, pg_backup_archiver.c _printTocEntry; names in it have \n and \r
// replaced, so no name can start a line; lines are split at \n only, and a header whose
// separators a name repeats gives no type: header() below); a grant is touched only in an ACL entry, a default
// privilege only in a DEFAULT ACL entry, and an owner change only when its role is the entry's
// `Owner:` (the header line's end). Anything else is passed on untouched.
//
// An owner change to a role the restorer is a member of, when it is not a superuser, runs
// guarded (below): PostgreSQL also wants the new owner to have CREATE on the object's schema
// (ATExecChangeOwner in src/backend/commands/tablecmds.c), which the dump's ACLs, last in it,
// may give only later, or never.
//
// The function is self-contained (no imports, no outer names but its parameters): the zlib
// child's program inlines its source text, and the tests call it directly.

import type { StatementSplitter } from './sql-statements.ts';

export interface RoleFilterOptions {
  /** Every role at the target → whether the restoring role can act as it (superuser or member). */
  roles: Record<string, boolean>;
  superuser: boolean;
  /** The restoring role itself. */
  current: string;
  /**
   * Random per restore: in the warning a refused guarded owner change raises, so that a tenant's
   * own function raising a WARNING during the restore cannot pass for one (pipes.ts).
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

/** `splitter` is sql-statements.ts's, passed in because both run inlined in the zlib child. */
export function roleStatementFilter(
  options: RoleFilterOptions,
  splitter: (statement: (text: Buffer, bodyStart: number) => Buffer[]) => StatementSplitter,
): RoleFilter {
  const roles = new Map<string, boolean>(Object.entries(options.roles));
  const named = new Set<string>();
  let count = 0;
  let entry = { type: '', line: '' };
  let sessionSkipped = false;
  // An owner change to a role the restorer is a member of, but not a superuser: PostgreSQL also
  // wants that role to have CREATE on the schema (or database), which the dump may not give it
  // until its ACLs at the end. Such a change runs in a block that turns a refusal into a warning
  // psql prints (pipes.ts counts them into the skipped), instead of failing the restore.
  let guarded: string | null = null;

  type Token = { k: 'word' | 'ident' | 'str' | 'punct'; v: string };
  function tokens(s: string): Token[] | null {
    const out: Token[] = [];
    let i = 0;
    while (i < s.length) {
      const c = s[i]!;
      if (/\s/.test(c)) i += 1;
      else if (c === '"' || c === "'") {
        let v = '';
        let j = i + 1;
        for (;;) {
          const e = s.indexOf(c, j);
          if (e < 0) return null;
          v += s.slice(j, e);
          if (s[e + 1] !== c) {
            j = e + 1;
            break;
          }
          v += c;
          j = e + 2;
        }
        out.push({ k: c === '"' ? 'ident' : 'str', v });
        i = j;
      } else if ('(),;'.includes(c)) {
        out.push({ k: 'punct', v: c });
        i += 1;
      } else {
        const m = /^[^\s"'(),;]+/.exec(s.slice(i, i + 200))!;
        out.push({ k: 'word', v: m[0] });
        i += m[0].length;
      }
    }
    return out;
  }
  const word = (t: Token | undefined, w: string): boolean => t?.k === 'word' && t.v.toUpperCase() === w;
  /** A role as pg_dump prints it (fmtId: bare when lower-case and plain, else quoted); null: not a role token. */
  const roleOf = (t: Token | undefined): string | null =>
    t?.k === 'ident' ? t.v : t?.k === 'word' && /^[a-z_][a-z0-9_$]*$/.test(t.v) ? t.v : null;
  /** The roles after the last TO/FROM outside parentheses; null when the statement does not read so. */
  function grantees(ts: Token[], from: number, kw: string): string[] | null {
    let d = 0;
    let at = -1;
    for (let i = from; i < ts.length; i++) {
      const t = ts[i]!;
      if (t.k === 'punct' && t.v === '(') d += 1;
      else if (t.k === 'punct' && t.v === ')') d -= 1;
      else if (d === 0 && word(t, kw)) at = i;
    }
    if (at < 0) return null;
    const out: string[] = [];
    for (let i = at + 1; ; i += 2) {
      const t = ts[i];
      if (word(t, 'PUBLIC')) out.push('');
      else {
        const r = roleOf(t);
        if (r === null) return null;
        out.push(r);
      }
      const next = ts[i + 1];
      if (next?.k === 'punct' && next.v === ',') continue;
      if (next?.k === 'punct' && next.v === ';' && i + 2 === ts.length) return out;
      if (word(next, 'WITH') || word(next, 'CASCADE') || word(next, 'RESTRICT')) return out;
      return null;
    }
  }
  const exists = (r: string): boolean => r === '' || roles.has(r);
  // A role that does not exist cannot own anything, not even for a superuser.
  const usable = (r: string): boolean => roles.has(r) && (options.superuser || roles.get(r) === true);
  let largeObjectOwners = 0;
  /** What a left-out statement was, for its comment: fixed words, never the statement's own text. */
  let kind = '';
  /** The statement left out is a no-op, not something lost: not counted. */
  let silent = false;

  /** The roles that make this statement impossible here; null: keep it. */
  function blockers(body: string): string[] | null {
    const head = body.slice(0, 40).toUpperCase();
    if (!/^(ALTER|GRANT|REVOKE|SET|RESET)\s/.test(head)) return null;
    const ts = tokens(body);
    if (!ts || ts.length < 3 || ts[ts.length - 1]!.v !== ';') return null;
    if (entry.type === 'ACL' && word(ts[0], 'SET') && word(ts[1], 'SESSION') && word(ts[2], 'AUTHORIZATION')) {
      const r = roleOf(ts[3]);
      if (r === null || ts.length !== 5) return null;
      sessionSkipped = !options.superuser || !exists(r);
      kind = 'a SET SESSION AUTHORIZATION naming a role that cannot be used here';
      return sessionSkipped ? [r] : null;
    }
    if (entry.type === 'ACL' && word(ts[0], 'RESET') && word(ts[1], 'SESSION') && ts.length === 4) {
      const skip = sessionSkipped;
      sessionSkipped = false;
      kind = 'the end of a SET SESSION AUTHORIZATION left out';
      return skip ? [] : null;
    }
    if (entry.type === 'ACL' && (word(ts[0], 'GRANT') || word(ts[0], 'REVOKE'))) {
      const gs = grantees(ts, 1, word(ts[0], 'GRANT') ? 'TO' : 'FROM');
      const missing = gs?.filter((g) => !exists(g));
      kind = 'a grant or revoke naming a role the target lacks';
      return missing && missing.length > 0 ? missing : null;
    }
    if (entry.type === 'DEFAULT ACL' && word(ts[1], 'DEFAULT') && word(ts[3], 'FOR') && word(ts[4], 'ROLE')) {
      const r = roleOf(ts[5]);
      const at = ts.findIndex((t) => word(t, 'GRANT') || word(t, 'REVOKE'));
      const gs = r === null || at < 0 ? null : grantees(ts, at + 1, word(ts[at], 'GRANT') ? 'TO' : 'FROM');
      if (!gs || r === null) return null;
      const out = [...(usable(r) ? [] : [r]), ...gs.filter((g) => !exists(g))];
      kind = 'default privileges naming a role that cannot be used here';
      return out.length > 0 ? out : null;
    }
    const n = ts.length;
    if (word(ts[0], 'ALTER') && word(ts[n - 4], 'OWNER') && word(ts[n - 3], 'TO')) {
      const r = roleOf(ts[n - 2]);
      // The owner is the line's end: a name before it cannot move the end (an Owner name that
      // itself ends in `; Owner: r` could only make an owner change to r look certain, and one
      // left out or guarded costs nothing a failed one would not).
      if (r === null || !entry.line.endsWith(`; Owner: ${r}`)) return null;
      kind = 'an owner change to a role that cannot be used here';
      if (!usable(r)) return [r];
      const largeObject = word(ts[1], 'LARGE') && word(ts[2], 'OBJECT');
      // The restorer created the object, so it owns it already: a no-op, except for a schema
      // (public is the wipe's, owned by pg_database_owner). Left out, and not reported: a large
      // object's takes a lock held until COMMIT, and a dump may hold tens of thousands.
      if (r === options.current && !word(ts[1], 'SCHEMA')) {
        kind = 'an owner change to the restoring role itself, which owns the object already';
        silent = true;
        return [];
      }
      if (largeObject && options.largeObjectOwners !== undefined) {
        largeObjectOwners += 1;
        if (largeObjectOwners > options.largeObjectOwners) {
          kind = 'an owner change of a large object past the share of the lock table a restore may take';
          return [r];
        }
      }
      if (!options.superuser && r !== options.current) guarded = r;
    }
    return null;
  }

  /**
   * pg_dump's TOC header, `-- [Data for ]Name: N; Type: T; Schema: S; Owner: O`
   * (pg_backup_archiver.c, _printTocEntry). Lines end at `\n` only: pg_dump replaces `\n` and `\r`
   * in names (sanitize_line) but nothing else, so U+2028 and U+2029 may sit inside a name, where
   * JavaScript's `^`, `$` and `.` would see a line end. N, S and O are names, T one of pg_dump's
   * own words: when a name repeats `; Type: ` or `; Schema: `, the type cannot be read with
   * certainty and is none (grants and default privileges in it pass on untouched); no name can
   * make it another.
   */
  function header(line: string): { type: string; line: string } | null {
    if (!/^-- (?:Data for )?Name: /.test(line)) return null;
    const count = (sep: string) => line.split(sep).length - 1;
    const t = line.indexOf('; Type: ');
    const s = line.indexOf('; Schema: ', t);
    const type = t < 0 || s < 0 ? '' : line.slice(t + 8, s);
    const certain = count('; Type: ') === 1 && count('; Schema: ') === 1 && /^[A-Z][A-Z ]*$/.test(type);
    return { type: certain ? type : '', line };
  }

  /** A whole statement, its leading comments included: passed on, or passed on as comments. */
  function statement(text: Buffer, body: number): Buffer[] {
    const prefix = text.toString('utf8', 0, body);
    for (const line of prefix.split('\n')) {
      const h = header(line);
      if (h) {
        entry = h;
        sessionSkipped = false;
      }
    }
    const sql = text.toString('utf8', body);
    guarded = null;
    silent = false;
    const why = blockers(sql);
    // Set by blockers (a closure TypeScript does not follow).
    const owner = guarded as string | null;
    if (why === null && owner !== null && !sql.includes('$cairn_owner$')) {
      // The role goes into the warning as hex: no name can end psql's line or fake the marker.
      const role = Buffer.from(owner, 'utf8').toString('hex');
      const marker = `cairn-left-out-owner:${options.nonce ?? ''}:${role}`;
      return [
        Buffer.from(
          `${prefix}DO $cairn_owner$ BEGIN ${sql} EXCEPTION WHEN insufficient_privilege THEN RAISE WARNING '%', '${marker}'; END $cairn_owner$;`,
        ),
      ];
    }
    if (why === null) {
      return [text];
    }
    if (!(silent as boolean)) count += 1;
    for (const r of why) named.add(r);
    // Only fixed words: the statement's text (names in it) could end a `--` comment, which
    // PostgreSQL's scanner ends at \r as at \n (scan.l, `non_newline`), and run what follows.
    // The roles are reported through skipped(), not written here.
    return [Buffer.from(`${prefix}-- left out by Cairn: ${kind}\n`)];
  }

  const split = splitter(statement);
  return {
    push: (chunk) => split.push(chunk),
    end: () => split.end(),
    skipped: () => ({ statements: count, roles: [...named].filter((r) => r !== '').sort() }),
  };
}

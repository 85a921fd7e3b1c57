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
// The functions are self-contained as a set (no imports, no outer names but each other's, all
// prefixed `rf`): the zlib child's program inlines their source text (roleFilterSource), and the
// tests call them directly.
import type { StatementSplitter } from './sql-statements.ts';
import type { RfState, RfToken, RoleFilter, RoleFilterOptions } from './role-filter-types.ts';
export type { RoleFilter, RoleFilterOptions, Skipped } from './role-filter-types.ts';

/** A quoted string or identifier starting at `i`: its value and where it ends; null when unterminated. */
function rfQuoted(s: string, i: number): { v: string; end: number } | null {
  const c = s[i]!;
  let v = '';
  let j = i + 1;
  for (;;) {
    const e = s.indexOf(c, j);
    if (e < 0) return null;
    v += s.slice(j, e);
    if (s[e + 1] !== c) return { v, end: e + 1 };
    v += c;
    j = e + 2;
  }
}

function rfTokens(s: string): RfToken[] | null {
  const out: RfToken[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (/\s/.test(c)) i += 1;
    else if (c === '"' || c === "'") {
      const q = rfQuoted(s, i);
      if (!q) return null;
      out.push({ k: c === '"' ? 'ident' : 'str', v: q.v });
      i = q.end;
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

function rfWord(t: RfToken | undefined, w: string): boolean {
  return t?.k === 'word' && t.v.toUpperCase() === w;
}

/** A role as pg_dump prints it (fmtId: bare when lower-case and plain, else quoted); null: not a role token. */
function rfRoleOf(t: RfToken | undefined): string | null {
  return t?.k === 'ident' ? t.v : t?.k === 'word' && /^[a-z_][a-z0-9_$]*$/.test(t.v) ? t.v : null;
}

/** The roles after the last TO/FROM outside parentheses; null when the statement does not read so. */
function rfGrantees(ts: RfToken[], from: number, kw: string): string[] | null {
  let d = 0;
  let at = -1;
  for (let i = from; i < ts.length; i++) {
    const t = ts[i]!;
    if (t.k === 'punct' && t.v === '(') d += 1;
    else if (t.k === 'punct' && t.v === ')') d -= 1;
    else if (d === 0 && rfWord(t, kw)) at = i;
  }
  if (at < 0) return null;
  const out: string[] = [];
  for (let i = at + 1; ; i += 2) {
    const t = ts[i];
    if (rfWord(t, 'PUBLIC')) out.push('');
    else {
      const r = rfRoleOf(t);
      if (r === null) return null;
      out.push(r);
    }
    const next = ts[i + 1];
    if (next?.k === 'punct' && next.v === ',') continue;
    if (next?.k === 'punct' && next.v === ';' && i + 2 === ts.length) return out;
    if (rfWord(next, 'WITH') || rfWord(next, 'CASCADE') || rfWord(next, 'RESTRICT')) return out;
    return null;
  }
}

function rfExists(st: RfState, r: string): boolean {
  return r === '' || st.roles.has(r);
}

// A role that does not exist cannot own anything, not even for a superuser.
function rfUsable(st: RfState, r: string): boolean {
  return st.roles.has(r) && (st.options.superuser || st.roles.get(r) === true);
}

/** SET SESSION AUTHORIZATION and its RESET, in an ACL entry; undefined: not one. */
function rfSessionBlockers(st: RfState, ts: RfToken[]): string[] | null | undefined {
  if (rfWord(ts[0], 'SET') && rfWord(ts[1], 'SESSION') && rfWord(ts[2], 'AUTHORIZATION')) {
    const r = rfRoleOf(ts[3]);
    if (r === null || ts.length !== 5) return null;
    st.sessionSkipped = !st.options.superuser || !rfExists(st, r);
    st.kind = 'a SET SESSION AUTHORIZATION naming a role that cannot be used here';
    return st.sessionSkipped ? [r] : null;
  }
  if (rfWord(ts[0], 'RESET') && rfWord(ts[1], 'SESSION') && ts.length === 4) {
    const skip = st.sessionSkipped;
    st.sessionSkipped = false;
    st.kind = 'the end of a SET SESSION AUTHORIZATION left out';
    return skip ? [] : null;
  }
  return undefined;
}

function rfDefaultAclBlockers(st: RfState, ts: RfToken[]): string[] | null {
  const r = rfRoleOf(ts[5]);
  const at = ts.findIndex((t) => rfWord(t, 'GRANT') || rfWord(t, 'REVOKE'));
  const gs = r === null || at < 0 ? null : rfGrantees(ts, at + 1, rfWord(ts[at], 'GRANT') ? 'TO' : 'FROM');
  if (!gs || r === null) return null;
  const out = [...(rfUsable(st, r) ? [] : [r]), ...gs.filter((g) => !rfExists(st, g))];
  st.kind = 'default privileges naming a role that cannot be used here';
  return out.length > 0 ? out : null;
}

function rfOwnerBlockers(st: RfState, ts: RfToken[]): string[] | null {
  const { options } = st;
  const r = rfRoleOf(ts[ts.length - 2]);
  // The owner is the line's end: a name before it cannot move the end (an Owner name that
  // itself ends in `; Owner: r` could only make an owner change to r look certain, and one
  // left out or guarded costs nothing a failed one would not).
  if (r === null || !st.entry.line.endsWith(`; Owner: ${r}`)) return null;
  st.kind = 'an owner change to a role that cannot be used here';
  if (!rfUsable(st, r)) return [r];
  const largeObject = rfWord(ts[1], 'LARGE') && rfWord(ts[2], 'OBJECT');
  // The restorer created the object, so it owns it already: a no-op, except for a schema
  // (public is the wipe's, owned by pg_database_owner). Left out, and not reported: a large
  // object's takes a lock held until COMMIT, and a dump may hold tens of thousands.
  if (r === options.current && !rfWord(ts[1], 'SCHEMA')) {
    st.kind = 'an owner change to the restoring role itself, which owns the object already';
    st.silent = true;
    return [];
  }
  if (largeObject && options.largeObjectOwners !== undefined) {
    st.largeObjectOwners += 1;
    if (st.largeObjectOwners > options.largeObjectOwners) {
      st.kind = 'an owner change of a large object past the share of the lock table a restore may take';
      return [r];
    }
  }
  if (!options.superuser && r !== options.current) st.guarded = r;
  return null;
}

/** The roles that make this statement impossible here; null: keep it. */
function rfBlockers(st: RfState, body: string): string[] | null {
  const head = body.slice(0, 40).toUpperCase();
  if (!/^(ALTER|GRANT|REVOKE|SET|RESET)\s/.test(head)) return null;
  const ts = rfTokens(body);
  if (!ts || ts.length < 3 || ts[ts.length - 1]!.v !== ';') return null;
  const type = st.entry.type;
  const session = type === 'ACL' ? rfSessionBlockers(st, ts) : undefined;
  if (session !== undefined) return session;
  if (type === 'ACL' && (rfWord(ts[0], 'GRANT') || rfWord(ts[0], 'REVOKE'))) {
    const gs = rfGrantees(ts, 1, rfWord(ts[0], 'GRANT') ? 'TO' : 'FROM');
    const missing = gs?.filter((g) => !rfExists(st, g));
    st.kind = 'a grant or revoke naming a role the target lacks';
    return missing && missing.length > 0 ? missing : null;
  }
  if (type === 'DEFAULT ACL' && rfWord(ts[1], 'DEFAULT') && rfWord(ts[3], 'FOR') && rfWord(ts[4], 'ROLE'))
    return rfDefaultAclBlockers(st, ts);
  const n = ts.length;
  if (rfWord(ts[0], 'ALTER') && rfWord(ts[n - 4], 'OWNER') && rfWord(ts[n - 3], 'TO')) return rfOwnerBlockers(st, ts);
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
function rfHeader(line: string): { type: string; line: string } | null {
  if (!/^-- (?:Data for )?Name: /.test(line)) return null;
  const count = (sep: string) => line.split(sep).length - 1;
  const t = line.indexOf('; Type: ');
  const s = line.indexOf('; Schema: ', t);
  const type = t < 0 || s < 0 ? '' : line.slice(t + 8, s);
  const certain = count('; Type: ') === 1 && count('; Schema: ') === 1 && /^[A-Z][A-Z ]*$/.test(type);
  return { type: certain ? type : '', line };
}

/** A whole statement, its leading comments included: passed on, or passed on as comments. */
function rfStatement(st: RfState, text: Buffer, body: number): Buffer[] {
  const prefix = text.toString('utf8', 0, body);
  for (const line of prefix.split('\n')) {
    const h = rfHeader(line);
    if (h) {
      st.entry = h;
      st.sessionSkipped = false;
    }
  }
  const sql = text.toString('utf8', body);
  st.guarded = null;
  st.silent = false;
  const why = rfBlockers(st, sql);
  const owner = st.guarded;
  if (why === null && owner !== null && !sql.includes('$cairn_owner$')) {
    // The role goes into the warning as hex: no name can end psql's line or fake the marker.
    const role = Buffer.from(owner, 'utf8').toString('hex');
    const marker = `cairn-left-out-owner:${st.options.nonce ?? ''}:${role}`;
    return [
      Buffer.from(
        `${prefix}DO $cairn_owner$ BEGIN ${sql} EXCEPTION WHEN insufficient_privilege THEN RAISE WARNING '%', '${marker}'; END $cairn_owner$;`,
      ),
    ];
  }
  if (why === null) {
    return [text];
  }
  if (!st.silent) st.count += 1;
  for (const r of why) st.named.add(r);
  // Only fixed words: the statement's text (names in it) could end a `--` comment, which
  // PostgreSQL's scanner ends at \r as at \n (scan.l, `non_newline`), and run what follows.
  // The roles are reported through skipped(), not written here.
  return [Buffer.from(`${prefix}-- left out by Cairn: ${st.kind}\n`)];
}

/** `splitter` is sql-statements.ts's, passed in so that each module's source is inlined whole. */
export function roleStatementFilter(
  options: RoleFilterOptions,
  splitter: (statement: (text: Buffer, bodyStart: number) => Buffer[]) => StatementSplitter,
): RoleFilter {
  const st: RfState = {
    options,
    roles: new Map<string, boolean>(Object.entries(options.roles)),
    named: new Set<string>(),
    count: 0,
    entry: { type: '', line: '' },
    sessionSkipped: false,
    guarded: null,
    largeObjectOwners: 0,
    kind: '',
    silent: false,
  };
  const split = splitter((text, body) => rfStatement(st, text, body));
  return {
    push: (chunk) => split.push(chunk),
    end: () => split.end(),
    skipped: () => ({ statements: st.count, roles: [...st.named].filter((r) => r !== '').sort() }),
  };
}

/** The source text of the filter and its helpers, for the zlib child's program. */
export const roleFilterSource = [
  rfQuoted,
  rfTokens,
  rfWord,
  rfRoleOf,
  rfGrantees,
  rfExists,
  rfUsable,
  rfSessionBlockers,
  rfDefaultAclBlockers,
  rfOwnerBlockers,
  rfBlockers,
  rfHeader,
  rfStatement,
  roleStatementFilter,
]
  .map(String)
  .join('\n');

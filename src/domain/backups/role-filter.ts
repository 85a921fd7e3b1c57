// A dump names roles: owners (`ALTER … OWNER TO r;`), grantees (`GRANT … TO r;`, `REVOKE … FROM
// r;`), default privileges (`ALTER DEFAULT PRIVILEGES FOR ROLE r … TO g;`) and grantors (`SET
// SESSION AUTHORIZATION r;`). Restored elsewhere, a role may not exist, or the restoring role may
// not act as it (PostgreSQL: ALTER … OWNER TO needs the restorer to be a member of the new owner,
// ALTER DEFAULT PRIVILEGES FOR ROLE too, SET SESSION AUTHORIZATION a superuser), and one such
// statement would fail, and so roll back, the whole restore. This filter turns exactly those
// statements into SQL comments and counts them: the object then stays owned by the restoring
// role (what `pg_dump --no-owner` gave) and the missing grant is reported, not silently lost.
//
// Reading statements with certainty. The script is lexed as PostgreSQL's scanner reads it
// (src/backend/parser/scan.l): '…' and E'…' strings, "…" identifiers, $tag$…$tag$ bodies, --
// and nested /* */ comments; a `;` outside all of them ends a statement. A `COPY … FROM stdin;`
// statement is followed by its rows up to the `\.` line, which row data cannot contain (COPY
// escapes a backslash), so rows are never read as SQL. Each statement's leading comments hold
// pg_dump's TOC header (`-- Name: …; Type: ACL; Schema: …; Owner: …`, pg_backup_archiver.c
// _printTocEntry; names in it have their newlines replaced, so no name can forge one); a grant
// is touched only in an ACL entry, a default privilege only in a DEFAULT ACL entry, and an owner
// change only when its role is the entry's `Owner:`. Anything else is passed on untouched.
//
// The function is self-contained (no imports, no outer names): the zlib child's program inlines
// its source text, and the tests call it directly.

export interface RoleFilterOptions {
  /** Every role at the target → whether the restoring role can act as it (superuser or member). */
  roles: Record<string, boolean>;
  superuser: boolean;
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

export function roleStatementFilter(options: RoleFilterOptions): RoleFilter {
  const roles = new Map<string, boolean>(Object.entries(options.roles));
  const copyEnd = Buffer.from('\n\\.\n');
  const named = new Set<string>();
  let count = 0;
  let buf: Buffer = Buffer.alloc(0);
  let pos = 0;
  let bodyStart = -1;
  // 0 SQL, 1 '…', 2 E'…', 3 "…", 4 $tag$…, 5 -- comment, 6 /* */ comment, 7 COPY rows.
  let q = 0;
  let depth = 0;
  let tag: Buffer = Buffer.alloc(0);
  let entry = { type: '', owner: '' };
  let sessionSkipped = false;

  const identChar = (c: number | undefined): boolean =>
    c !== undefined &&
    ((c >= 0x30 && c <= 0x39) ||
      (c >= 0x41 && c <= 0x5a) ||
      (c >= 0x61 && c <= 0x7a) ||
      c === 0x5f ||
      c === 0x24 ||
      c >= 0x80);
  const space = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d || c === 0x0c;

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
  const usable = (r: string): boolean => options.superuser || roles.get(r) === true;

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
      return sessionSkipped ? [r] : null;
    }
    if (entry.type === 'ACL' && word(ts[0], 'RESET') && word(ts[1], 'SESSION') && ts.length === 4) {
      const skip = sessionSkipped;
      sessionSkipped = false;
      return skip ? [] : null;
    }
    if (entry.type === 'ACL' && (word(ts[0], 'GRANT') || word(ts[0], 'REVOKE'))) {
      const gs = grantees(ts, 1, word(ts[0], 'GRANT') ? 'TO' : 'FROM');
      const missing = gs?.filter((g) => !exists(g));
      return missing && missing.length > 0 ? missing : null;
    }
    if (entry.type === 'DEFAULT ACL' && word(ts[1], 'DEFAULT') && word(ts[3], 'FOR') && word(ts[4], 'ROLE')) {
      const r = roleOf(ts[5]);
      const at = ts.findIndex((t) => word(t, 'GRANT') || word(t, 'REVOKE'));
      const gs = r === null || at < 0 ? null : grantees(ts, at + 1, word(ts[at], 'GRANT') ? 'TO' : 'FROM');
      if (!gs || r === null) return null;
      const out = [...(usable(r) ? [] : [r]), ...gs.filter((g) => !exists(g))];
      return out.length > 0 ? out : null;
    }
    const n = ts.length;
    if (word(ts[0], 'ALTER') && word(ts[n - 4], 'OWNER') && word(ts[n - 3], 'TO')) {
      const r = roleOf(ts[n - 2]);
      return r !== null && r === entry.owner && !usable(r) ? [r] : null;
    }
    return null;
  }

  /** A whole statement, its leading comments included: passed on, or passed on as comments. */
  function statement(text: Buffer, body: number, out: Buffer[]): void {
    const prefix = text.toString('utf8', 0, body);
    const headers = [...prefix.matchAll(/^-- (?:Data for )?Name: .*; Type: ([A-Z ]+); Schema: .*; Owner: (.*)$/gm)];
    const h = headers[headers.length - 1];
    if (h) {
      entry = { type: h[1]!, owner: h[2]! };
      sessionSkipped = false;
    }
    const sql = text.toString('utf8', body);
    const why = blockers(sql);
    if (why === null) {
      out.push(text);
      return;
    }
    count += 1;
    for (const r of why) named.add(r);
    const note =
      why.length > 0 ? ` role ${why.join(', ')} cannot be used here` : ' it ends a SET SESSION AUTHORIZATION left out';
    out.push(Buffer.from(`${prefix}-- ${sql.replace(/\n/g, '\n-- ')} -- left out by Cairn:${note}\n`));
  }

  function scan(final: boolean, out: Buffer[]): void {
    let start = 0;
    const len = buf.length;
    while (pos < len) {
      if (q === 7) {
        const at = buf.indexOf(copyEnd, Math.max(start, pos - 1));
        if (at < 0) {
          pos = Math.max(start, len - (copyEnd.length - 1));
          out.push(buf.subarray(start, pos));
          start = pos;
          break;
        }
        pos = at + copyEnd.length;
        out.push(buf.subarray(start, pos));
        start = pos;
        q = 0;
        bodyStart = -1;
        continue;
      }
      const c = buf[pos]!;
      if (q === 1 || q === 3) {
        const at = buf.indexOf(q === 1 ? 0x27 : 0x22, pos);
        if (at < 0) pos = len;
        else {
          pos = at + 1;
          q = 0;
        }
      } else if (q === 2) {
        if (c === 0x5c) pos += 2;
        else {
          if (c === 0x27) q = 0;
          pos += 1;
        }
      } else if (q === 4) {
        const at = buf.indexOf(tag, pos);
        if (at < 0) pos = Math.max(pos, len - tag.length + 1);
        else {
          pos = at + tag.length;
          q = 0;
        }
        if (at < 0) break;
      } else if (q === 5) {
        const at = buf.indexOf(0x0a, pos);
        if (at < 0) pos = len;
        else {
          pos = at + 1;
          q = 0;
        }
      } else if (q === 6) {
        if (pos + 1 >= len && !final) break;
        if (c === 0x2a && buf[pos + 1] === 0x2f) {
          depth -= 1;
          pos += 2;
          if (depth === 0) q = 0;
        } else if (c === 0x2f && buf[pos + 1] === 0x2a) {
          depth += 1;
          pos += 2;
        } else pos += 1;
      } else if (space(c)) pos += 1;
      else if ((c === 0x2d || c === 0x2f) && pos + 1 >= len && !final) break;
      else if (c === 0x2d && buf[pos + 1] === 0x2d) {
        q = 5;
        pos += 2;
      } else if (c === 0x2f && buf[pos + 1] === 0x2a) {
        q = 6;
        depth = 1;
        pos += 2;
      } else {
        if (bodyStart < 0) bodyStart = pos;
        if (c === 0x3b) {
          const text = buf.subarray(start, pos + 1);
          statement(text, bodyStart - start, out);
          const copy =
            text.toString('latin1', bodyStart - start, bodyStart - start + 5) === 'COPY ' &&
            text.toString('latin1', text.length - 12) === ' FROM stdin;';
          pos += 1;
          start = pos;
          bodyStart = -1;
          if (copy) q = 7;
        } else if (c === 0x27) {
          const e = buf[pos - 1];
          q = (e === 0x45 || e === 0x65) && !identChar(buf[pos - 2]) ? 2 : 1;
          pos += 1;
        } else if (c === 0x22) {
          q = 3;
          pos += 1;
        } else if (c === 0x24 && !identChar(buf[pos - 1])) {
          let j = pos + 1;
          while (j < len && identChar(buf[j]) && buf[j] !== 0x24 && !(j === pos + 1 && buf[j]! <= 0x39)) j += 1;
          if (j >= len && !final) break;
          if (buf[j] === 0x24) {
            tag = Buffer.from(buf.subarray(pos, j + 1));
            q = 4;
            pos = j + 1;
          } else pos += 1;
        } else pos += 1;
      }
    }
    // The statement under way is held, its scan state kept; only COPY rows pass at once.
    buf = Buffer.from(buf.subarray(start));
    if (bodyStart >= 0) bodyStart -= start;
    pos -= start;
    if (final && buf.length > 0) {
      out.push(buf);
      buf = Buffer.alloc(0);
      pos = 0;
    }
  }

  return {
    push(chunk) {
      const out: Buffer[] = [];
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      scan(false, out);
      return out.filter((b) => b.length > 0);
    },
    end() {
      const out: Buffer[] = [];
      scan(true, out);
      return out.filter((b) => b.length > 0);
    },
    skipped: () => ({ statements: count, roles: [...named].filter((r) => r !== '').sort() }),
  };
}

// Splits a plain pg_dump script into whole statements as PostgreSQL's scanner reads it
// (src/backend/parser/scan.l): '…' and E'…' strings, "…" identifiers, $tag$…$tag$ bodies, -- and
// nested /* */ comments; a `;` outside all of them ends a statement. A `COPY … FROM stdin;`
// statement is followed by its rows up to the `\.` line, which row data cannot contain (COPY
// escapes a backslash), so rows are passed on as they come and never read as SQL. Each statement
// is handed over whole, its leading comments (pg_dump's TOC header among them) included, with
// where its SQL begins; what the callback answers is passed on in its place.
//
// Cost: one pass over the bytes outside COPY rows (strings and dollar bodies are skipped with
// indexOf); a statement is held until its `;` arrives, so memory is that of the longest statement
// (a function body, or a large object's 16 KiB hex chunk), not of the script.
//
// The functions are self-contained as a set (no imports, no outer names but each other's, all
// prefixed `sql`): the zlib child's program inlines their source text (sqlStatementsSource), and
// the tests call them directly.

export interface StatementSplitter {
  push(chunk: Buffer): Buffer[];
  /** The rest, at the end of the script (an unfinished statement is passed on as it is). */
  end(): Buffer[];
}

// The splitter's state. `q`: 0 SQL, 1 '…', 2 E'…', 3 "…", 4 $tag$…, 5 -- comment, 6 /* */ comment, 7 COPY rows.
interface SqlSplitState {
  statement: (text: Buffer, bodyStart: number) => Buffer[];
  buf: Buffer;
  pos: number;
  /** Where the scan started in `buf`: what is before it has been passed on. */
  start: number;
  bodyStart: number;
  q: number;
  depth: number;
  tag: Buffer;
}

function sqlIdentChar(c: number | undefined): boolean {
  return (
    c !== undefined &&
    ((c >= 0x30 && c <= 0x39) ||
      (c >= 0x41 && c <= 0x5a) ||
      (c >= 0x61 && c <= 0x7a) ||
      c === 0x5f ||
      c === 0x24 ||
      c >= 0x80)
  );
}

function sqlSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d || c === 0x0c;
}

/** COPY rows, passed on as they come up to the `\.` line; false: the chunk ended first. */
function sqlCopyRows(st: SqlSplitState, out: Buffer[]): boolean {
  const copyEnd = Buffer.from('\n\\.\n');
  const at = st.buf.indexOf(copyEnd, Math.max(st.start, st.pos - 1));
  if (at < 0) {
    st.pos = Math.max(st.start, st.buf.length - (copyEnd.length - 1));
    out.push(st.buf.subarray(st.start, st.pos));
    st.start = st.pos;
    return false;
  }
  st.pos = at + copyEnd.length;
  out.push(st.buf.subarray(st.start, st.pos));
  st.start = st.pos;
  st.q = 0;
  st.bodyStart = -1;
  return true;
}

/** Inside a string, identifier, dollar body or comment; false: more bytes are needed to go on. */
function sqlQuoted(st: SqlSplitState, final: boolean): boolean {
  const { buf } = st;
  const len = buf.length;
  const c = buf[st.pos]!;
  if (st.q === 1 || st.q === 3 || st.q === 5) {
    const at = buf.indexOf(st.q === 1 ? 0x27 : st.q === 3 ? 0x22 : 0x0a, st.pos);
    if (at < 0) st.pos = len;
    else {
      st.pos = at + 1;
      st.q = 0;
    }
  } else if (st.q === 2) {
    if (c === 0x5c) st.pos += 2;
    else {
      if (c === 0x27) st.q = 0;
      st.pos += 1;
    }
  } else if (st.q === 4) {
    const at = buf.indexOf(st.tag, st.pos);
    if (at < 0) {
      st.pos = Math.max(st.pos, len - st.tag.length + 1);
      return false;
    }
    st.pos = at + st.tag.length;
    st.q = 0;
  } else {
    if (st.pos + 1 >= len && !final) return false;
    if (c === 0x2a && buf[st.pos + 1] === 0x2f) {
      st.depth -= 1;
      st.pos += 2;
      if (st.depth === 0) st.q = 0;
    } else if (c === 0x2f && buf[st.pos + 1] === 0x2a) {
      st.depth += 1;
      st.pos += 2;
    } else st.pos += 1;
  }
  return true;
}

/** A `;` outside everything: the statement is handed over whole. */
function sqlStatementEnd(st: SqlSplitState, out: Buffer[]): void {
  const text = st.buf.subarray(st.start, st.pos + 1);
  const body = st.bodyStart - st.start;
  out.push(...st.statement(text, body));
  const copy =
    text.toString('latin1', body, body + 5) === 'COPY ' && text.toString('latin1', text.length - 12) === ' FROM stdin;';
  st.pos += 1;
  st.start = st.pos;
  st.bodyStart = -1;
  if (copy) st.q = 7;
}

/** A `$` that may open a dollar-quoted body; false: more bytes are needed to tell. */
function sqlDollar(st: SqlSplitState, final: boolean): boolean {
  const { buf, pos } = st;
  const len = buf.length;
  let j = pos + 1;
  while (j < len && sqlIdentChar(buf[j]) && buf[j] !== 0x24 && !(j === pos + 1 && buf[j]! <= 0x39)) j += 1;
  if (j >= len && !final) return false;
  if (buf[j] === 0x24) {
    st.tag = Buffer.from(buf.subarray(pos, j + 1));
    st.q = 4;
    st.pos = j + 1;
  } else st.pos += 1;
  return true;
}

/** Outside strings and comments; false: more bytes are needed to go on. */
function sqlCode(st: SqlSplitState, final: boolean, out: Buffer[]): boolean {
  const { buf, pos } = st;
  const c = buf[pos]!;
  if (sqlSpace(c)) st.pos += 1;
  else if ((c === 0x2d || c === 0x2f) && pos + 1 >= buf.length && !final) return false;
  else if (c === 0x2d && buf[pos + 1] === 0x2d) {
    st.q = 5;
    st.pos += 2;
  } else if (c === 0x2f && buf[pos + 1] === 0x2a) {
    st.q = 6;
    st.depth = 1;
    st.pos += 2;
  } else {
    if (st.bodyStart < 0) st.bodyStart = pos;
    if (c === 0x3b) sqlStatementEnd(st, out);
    else if (c === 0x27) {
      const e = buf[pos - 1];
      st.q = (e === 0x45 || e === 0x65) && !sqlIdentChar(buf[pos - 2]) ? 2 : 1;
      st.pos += 1;
    } else if (c === 0x22) {
      st.q = 3;
      st.pos += 1;
    } else if (c === 0x24 && !sqlIdentChar(buf[pos - 1])) return sqlDollar(st, final);
    else st.pos += 1;
  }
  return true;
}

function sqlScan(st: SqlSplitState, final: boolean, out: Buffer[]): void {
  st.start = 0;
  while (st.pos < st.buf.length) {
    const more = st.q === 7 ? sqlCopyRows(st, out) : st.q !== 0 ? sqlQuoted(st, final) : sqlCode(st, final, out);
    if (!more) break;
  }
  // The statement under way is held, its scan state kept; only COPY rows pass at once.
  const { start } = st;
  st.buf = Buffer.from(st.buf.subarray(start));
  if (st.bodyStart >= 0) st.bodyStart -= start;
  st.pos -= start;
  if (final && st.buf.length > 0) {
    out.push(st.buf);
    st.buf = Buffer.alloc(0);
    st.pos = 0;
  }
}

export function sqlStatementSplitter(statement: (text: Buffer, bodyStart: number) => Buffer[]): StatementSplitter {
  const st: SqlSplitState = {
    statement,
    buf: Buffer.alloc(0),
    pos: 0,
    start: 0,
    bodyStart: -1,
    q: 0,
    depth: 0,
    tag: Buffer.alloc(0),
  };
  return {
    push(chunk) {
      const out: Buffer[] = [];
      st.buf = st.buf.length === 0 ? chunk : Buffer.concat([st.buf, chunk]);
      sqlScan(st, false, out);
      return out.filter((b) => b.length > 0);
    },
    end() {
      const out: Buffer[] = [];
      sqlScan(st, true, out);
      return out.filter((b) => b.length > 0);
    },
  };
}

/** The source text of the splitter and its helpers, for the zlib child's program. */
export const sqlStatementsSource = [
  sqlIdentChar,
  sqlSpace,
  sqlCopyRows,
  sqlQuoted,
  sqlStatementEnd,
  sqlDollar,
  sqlCode,
  sqlScan,
  sqlStatementSplitter,
]
  .map(String)
  .join('\n');

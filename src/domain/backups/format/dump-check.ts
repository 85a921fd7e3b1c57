// What makes a plain `pg_dump` script whole, and what it holds per table. Both run inside the zlib
// child (zlib-child.ts inlines their source text, dumpCheckSource, as it does blobs-filter.ts's),
// so they are self-contained as a set: no imports, no outer names but each other's (the scanner's
// prefixed `cs`). The tests call them directly.
//
// The closing line. pg_dump ends every plain script it finished with
//
//   --
//   -- PostgreSQL database dump complete
//   --
//
// (src/bin/pg_dump/pg_backup_archiver.c, RestoreArchive). Since 15.14, 16.10 and 17.6
// (CVE-2025-8714) a `\unrestrict <key>` line and a blank line follow it. A script cut anywhere
// earlier (pg_dump killed, a pipe closed, an upload that lost its tail, an empty object) lacks it.
//
// Per-table figures. pg_dump writes each table's rows as one COPY block:
//
//   --
//   -- Data for Name: orders; Type: TABLE DATA; Schema: public; Owner: -
//   --
//
//   COPY public.orders (id, customer_id, total) FROM stdin;
//   1	17	12.50
//   \.
//
// For each block we keep the row count and an order-independent checksum of the row lines (the
// 32-bit sum and the xor of each line's 32-bit MurmurHash3), so a drill can dump the restored copy again
// and compare table by table even if rows come back in another physical order. The block is found
// exactly as blobs-filter.ts finds it (a `COPY ` line right after the header's `--` and blank
// line), and ends at the `\.` line, which row data cannot contain (COPY escapes a backslash).
// The checksum guards against accidental loss or change, not an adversary: the object itself is
// authenticated (format.ts).

/** Why a script is incomplete, or null when it ends with pg_dump's closing line. `tail` is its last few KB. */
export function dumpIncompleteReason(tail: string): string | null {
  const lines = tail.split('\n');
  const lastLine = (): string | undefined => {
    while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
    return lines[lines.length - 1];
  };
  if (lastLine()?.startsWith('\\unrestrict ')) lines.pop();
  const last = lastLine();
  if (last === undefined) return 'the dump is empty';
  if (last === '--' && lines[lines.length - 2] === '-- PostgreSQL database dump complete') return null;
  return 'the dump does not end with pg_dump\'s closing line ("-- PostgreSQL database dump complete"): it was cut short';
}

export interface TableFigures {
  rows: number;
  checksum: string;
}

export interface CopyStatsScanner {
  push(chunk: Buffer): void;
  /** schema.table as pg_dump names it → its figures, in dump order. */
  end(): Record<string, TableFigures>;
}

/** The scanner's state across chunks. */
interface CsState {
  tables: Record<string, TableFigures>;
  // Outside COPY: the current line's first bytes (enough for the table's name) and its state.
  line: string;
  lineLong: boolean;
  prev: string;
  prevPrev: string;
  // Inside COPY: the table and its figures, and the current row's hash state. A row is hashed
  // 4 bytes at a time (MurmurHash3's x86_32 mixing); up to 3 bytes wait in `carry` when a row
  // continues in the next chunk, so the hash never depends on where chunks split.
  table: string | null;
  rows: number;
  sum: number;
  xor: number;
  h: number;
  carry: number;
  carried: number;
  rowLength: number;
}

function csMix(hash: number, word: number): number {
  let k = Math.imul(word, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  hash ^= k;
  hash = (hash << 13) | (hash >>> 19);
  return (Math.imul(hash, 5) + 0xe6546b64) | 0;
}

function csFinish(hash: number, length: number): number {
  hash ^= length;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) >>> 0;
}

/** Hashes row bytes [from, to) of `c` into the current row. */
function csHashPart(st: CsState, c: Buffer, from: number, to: number): void {
  let i = from;
  st.rowLength += to - from;
  if (st.carried > 0) {
    while (st.carried < 4 && i < to) st.carry |= c[i++]! << (8 * st.carried++);
    if (st.carried < 4) return;
    st.h = csMix(st.h, st.carry);
    st.carry = 0;
    st.carried = 0;
  }
  for (; i + 4 <= to; i += 4) st.h = csMix(st.h, c[i]! | (c[i + 1]! << 8) | (c[i + 2]! << 16) | (c[i + 3]! << 24));
  while (i < to) st.carry |= c[i++]! << (8 * st.carried++);
}

function csHex(n: number): string {
  return (n >>> 0).toString(16).padStart(8, '0');
}

/** `schema.table`, each part bare or "quoted" (with "" inside), as pg_dump's fmtQualifiedId prints it. */
function csQualifiedNameLength(s: string, from: number): number {
  let i = from;
  for (let part = 0; part < 2; part++) {
    if (s[i] === '"') {
      i += 1;
      for (;;) {
        const q = s.indexOf('"', i);
        if (q < 0) return -1;
        i = q + 1;
        if (s[i] !== '"') break;
        i += 1;
      }
    } else {
      while (i < s.length && s[i] !== '.' && s[i] !== ' ') i += 1;
    }
    if (part === 0) {
      if (s[i] !== '.') return -1;
      i += 1;
    }
  }
  return s[i] === ' ' ? i - from : -1;
}

function csEndOuterLine(st: CsState): void {
  // `COPY <name> (<columns>) FROM stdin;` right after `--` and a blank line.
  if (st.prev === '' && st.prevPrev === '--' && st.line.startsWith('COPY ')) {
    const length = csQualifiedNameLength(st.line, 5);
    if (length > 0) {
      st.table = st.line.slice(5, 5 + length);
      st.rows = 0;
      st.sum = 0;
      st.xor = 0;
    }
  }
  st.prevPrev = st.prev;
  st.prev = st.lineLong ? '\u0000' : st.line;
  st.line = '';
  st.lineLong = false;
}

/** Ends the current row; false when it was the `\.` line that ends the block. */
function csEndRow(st: CsState): boolean {
  // Two bytes are all in `carry`: `\.` is 0x5c then 0x2e.
  if (st.rowLength === 2 && st.carry === 0x2e5c) {
    st.tables[st.table!] = { rows: st.rows, checksum: csHex(st.sum) + csHex(st.xor) };
    st.table = null;
  } else {
    if (st.carried > 0) st.h = csMix(st.h, st.carry);
    const row = csFinish(st.h, st.rowLength);
    st.rows += 1;
    st.sum = (st.sum + row) >>> 0;
    st.xor = (st.xor ^ row) >>> 0;
  }
  st.h = 0;
  st.carry = 0;
  st.carried = 0;
  st.rowLength = 0;
  return st.table !== null;
}

function csPush(st: CsState, chunk: Buffer): void {
  const keep = 1024;
  let at = 0;
  while (at < chunk.length) {
    const nl = chunk.indexOf(0x0a, at);
    const end = nl === -1 ? chunk.length : nl;
    if (st.table !== null) {
      csHashPart(st, chunk, at, end);
      if (nl === -1) return;
      if (!csEndRow(st)) {
        st.prev = '\\.';
        st.prevPrev = '';
      }
      at = nl + 1;
      continue;
    }
    if (!st.lineLong) {
      const room = keep - st.line.length;
      if (end - at > room) st.lineLong = true;
      st.line += chunk.toString('latin1', at, Math.min(end, at + room));
    }
    if (nl === -1) return;
    csEndOuterLine(st);
    at = nl + 1;
  }
}

export function copyStatsScanner(): CopyStatsScanner {
  const st: CsState = {
    tables: {},
    line: '',
    lineLong: false,
    prev: '',
    prevPrev: '',
    table: null,
    rows: 0,
    sum: 0,
    xor: 0,
    h: 0,
    carry: 0,
    carried: 0,
    rowLength: 0,
  };
  return {
    push: (chunk) => csPush(st, chunk),
    // A block the script never closed is not a table's data: the completeness check fails it.
    end: () => st.tables,
  };
}

/** The source text of both checks and the scanner's helpers, for the zlib child's program. */
export const dumpCheckSource = [
  dumpIncompleteReason,
  csMix,
  csFinish,
  csHashPart,
  csHex,
  csQualifiedNameLength,
  csEndOuterLine,
  csEndRow,
  csPush,
  copyStatsScanner,
]
  .map(String)
  .join('\n');

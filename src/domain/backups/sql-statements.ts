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
// The function is self-contained (no imports, no outer names): the zlib child's program inlines
// its source text, and the tests call it directly.

export interface StatementSplitter {
  push(chunk: Buffer): Buffer[];
  /** The rest, at the end of the script (an unfinished statement is passed on as it is). */
  end(): Buffer[];
}

export function sqlStatementSplitter(statement: (text: Buffer, bodyStart: number) => Buffer[]): StatementSplitter {
  const copyEnd = Buffer.from('\n\\.\n');
  let buf: Buffer = Buffer.alloc(0);
  let pos = 0;
  let bodyStart = -1;
  // 0 SQL, 1 '…', 2 E'…', 3 "…", 4 $tag$…, 5 -- comment, 6 /* */ comment, 7 COPY rows.
  let q = 0;
  let depth = 0;
  let tag: Buffer = Buffer.alloc(0);
  const identChar = (c: number | undefined): boolean =>
    c !== undefined &&
    ((c >= 0x30 && c <= 0x39) ||
      (c >= 0x41 && c <= 0x5a) ||
      (c >= 0x61 && c <= 0x7a) ||
      c === 0x5f ||
      c === 0x24 ||
      c >= 0x80);
  const space = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d || c === 0x0c;

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
          out.push(...statement(text, bodyStart - start));
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
  };
}

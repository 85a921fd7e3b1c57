// pg_dump's plain format wraps the large objects' data in a transaction of its own. pg_dump 15
// (what the workers run) prints, verified on its output:
//
//   --
//   -- Data for Name: BLOBS; Type: BLOBS; Schema: -; Owner: -
//   --
//
//   BEGIN;
//
//   SELECT pg_catalog.lo_open('16403', 131072);
//   SELECT pg_catalog.lowrite(0, '\x68656c6c6f');
//   SELECT pg_catalog.lo_close(0);
//
//   COMMIT;
//
// (src/bin/pg_dump/pg_backup_archiver.c: _printTocEntry prints the header, StartRestoreBlobs and
// EndRestoreBlobs the BEGIN and COMMIT unless pg_restore --single-transaction.) PostgreSQL 17's
// pg_dump splits large objects into groups of up to 1000, one "BLOBS" entry each, named by the
// group's first OID or OID range ("-- Data for Name: 16384..16385; Type: BLOBS; …"); that form is
// accepted too, from the source only (no pg_dump 17 on the workers to check it against).
//
// A restore replays the dump inside Cairn's own transaction, where that BEGIN only warns and that
// COMMIT commits Cairn's transaction early: everything after it (indexes, constraints, triggers)
// would run in autocommit, and a failure there would leave the target half restored. This filter
// turns exactly those two lines into comments, in the decompressor child, so the SQL still never
// passes through the worker.
//
// Why the match cannot hit data. COPY rows are lines too: a one-column table whose rows are the
// header's four lines, in order, prints the very same bytes (escaping newlines inside a value does
// not help). So the filter follows COPY blocks: after pg_dump's `--\n\nCOPY ` (the end of a TABLE
// DATA header) it looks only for the `\.` line that ends the block, which data cannot contain (COPY
// escapes a lone backslash-dot as `\\.`), and looks for the header only outside COPY. Inside the
// pair, pg_dump prints only lo_open/lowrite/lo_close, whose data is a one-line hex literal, so the
// next `COMMIT;` line is the pair's own. What remains is schema text the application's developers
// wrote (a function body or comment that copies pg_dump's lines with real newlines); rows, large
// objects and sequence values cannot produce it. (pg_dump --inserts would break this: Cairn never
// uses it.)
//
// Cost: Buffer.indexOf over each chunk, once per state; no per-line work, and chunks are not
// copied (the few bytes held back at a chunk's end are scanned with the next chunk's first few
// hundred). In-process, on COPY-heavy text in 128 KiB chunks: about 6 GB/s, where gunzip gives a
// few hundred MB/s; copying each chunk behind the held bytes alone ran at 1.7 GB/s.
//
// The function is self-contained (no imports, no outer names): the zlib child's program inlines
// its source text, and the tests call it directly.

export interface BlobsFilter {
  /** Filtered bytes ready to pass on (the end of the chunk may be held back until more arrives). */
  push(chunk: Buffer): Buffer[];
  /** What is still held back, at the end of the stream (and a failing statement if a BEGIN left out had no COMMIT). */
  end(): Buffer[];
}

export function blobsTransactionFilter(): BlobsFilter {
  const copyStart = Buffer.from('\n--\n\nCOPY ');
  const copyEnd = Buffer.from('\n\\.\n');
  const header = Buffer.from('\n--\n-- Data for Name: ');
  const headerRest = Buffer.from('; Type: BLOBS; Schema: -; Owner: -\n--\n\nBEGIN;\n');
  const closing = Buffer.from('\nCOMMIT;\n');
  const note = ' -- left out by Cairn: the restore is one transaction\n';
  const beginOut = Buffer.from(`-- BEGIN;${note}`);
  const commitOut = Buffer.from(`-- COMMIT;${note}`);
  const unfinished = Buffer.from(
    "\nDO $cairn$ BEGIN RAISE EXCEPTION 'cairn: the dump''s large-object section has no COMMIT of its own; nothing was committed'; END $cairn$;\n",
  );
  // "BLOBS" (pg_dump ≤ 16), an OID or "first..last" (17): at most 10 + 2 + 10 characters.
  const maxName = 22;
  const isName = (name: string): boolean => name === 'BLOBS' || /^\d{1,10}(\.\.\d{1,10})?$/.test(name);
  // Bytes of a chunk scanned together with the held ones: more than the ~90 a match can need.
  const seam = 256;
  let state: 'sql' | 'copy' | 'blobs' = 'sql';
  let held: Buffer = Buffer.alloc(0);
  // Stream offsets: bytes pushed so far, and the end of the last COMMIT left out.
  let total = 0;
  let lastCommitEnd = -1;

  /**
   * Scans `buf` (whose first byte is at stream offset `base`) from `start`, appending to `out` the
   * bytes decided, and answers where the undecided rest begins (at most ~90 bytes from the end:
   * a possible match cut by the end of `buf`), or `buf.length` when `final`.
   */
  function scan(buf: Buffer, base: number, start: number, final: boolean, out: Buffer[]): number {
    let emitted = start;
    let pos = start;
    // Where the next header and COPY start are, found once per buffer: -1 none, undefined unknown.
    let nextHeader: number | undefined;
    let nextCopy: number | undefined;
    let keepFrom: number;
    for (;;) {
      if (state === 'copy') {
        const at = buf.indexOf(copyEnd, pos);
        if (at < 0) {
          keepFrom = Math.max(pos, buf.length - (copyEnd.length - 1));
          break;
        }
        // The end's last newline may begin the next header.
        pos = at + copyEnd.length - 1;
        state = 'sql';
      } else if (state === 'blobs') {
        const at = buf.indexOf(closing, pos);
        if (at < 0) {
          keepFrom = Math.max(pos, buf.length - (closing.length - 1));
          break;
        }
        out.push(buf.subarray(emitted, at + 1), commitOut);
        emitted = pos = at + closing.length;
        lastCommitEnd = base + pos;
        state = 'sql';
      } else {
        if (nextHeader === undefined || (nextHeader >= 0 && nextHeader < pos)) nextHeader = buf.indexOf(header, pos);
        if (nextCopy === undefined || (nextCopy >= 0 && nextCopy < pos)) nextCopy = buf.indexOf(copyStart, pos);
        if (nextHeader < 0 && nextCopy < 0) {
          keepFrom = Math.max(pos, buf.length - (Math.max(header.length, copyStart.length) - 1));
          break;
        }
        if (nextCopy >= 0 && (nextHeader < 0 || nextCopy < nextHeader)) {
          pos = nextCopy + copyStart.length;
          state = 'copy';
          continue;
        }
        const at = nextHeader;
        const nameAt = at + header.length;
        const semi = buf.indexOf(0x3b, nameAt); // ';'
        const restEnd = semi + headerRest.length;
        if ((semi < 0 || restEnd > buf.length) && !final && buf.length - nameAt <= maxName + headerRest.length) {
          keepFrom = at; // cut by the chunk boundary: decide when more arrives
          break;
        }
        const matches =
          semi >= 0 &&
          semi - nameAt <= maxName &&
          restEnd <= buf.length &&
          isName(buf.toString('latin1', nameAt, semi)) &&
          buf.subarray(semi, restEnd).equals(headerRest);
        if (matches) {
          out.push(buf.subarray(emitted, restEnd - 'BEGIN;\n'.length), beginOut);
          emitted = pos = restEnd;
          state = 'blobs';
        } else {
          pos = at + 1;
        }
      }
    }
    if (final) keepFrom = buf.length;
    out.push(buf.subarray(emitted, keepFrom));
    return keepFrom;
  }

  /** Scans a chunk whose start continues the held bytes, and holds back its undecided end. */
  function drain(chunk: Buffer, start: number, out: Buffer[]): Buffer[] {
    const keepFrom = scan(chunk, total - chunk.length, start, false, out);
    // Copied, so the held bytes do not keep the whole chunk alive.
    held = Buffer.from(chunk.subarray(keepFrom));
    return out.filter((b) => b.length > 0);
  }

  return {
    push(chunk: Buffer): Buffer[] {
      total += chunk.length;
      if (held.length === 0) return drain(chunk, 0, []);
      if (chunk.length < seam) return drain(Buffer.concat([held, chunk]), 0, []);
      // Rather than copy every chunk behind the held bytes, scan the held bytes with the chunk's
      // first `seam` bytes after them (enough to decide any match that starts in the held part),
      // then go on in the chunk itself from where that scan stopped.
      const out: Buffer[] = [];
      const window = Buffer.concat([held, chunk.subarray(0, seam)]);
      const stop = scan(window, total - chunk.length - held.length, 0, false, out);
      return drain(chunk, stop - held.length, out);
    },
    end(): Buffer[] {
      const out: Buffer[] = [];
      scan(held, total - held.length, 0, true, out);
      held = Buffer.alloc(0);
      // A pair whose COMMIT never came has taken the restore's own final COMMIT (the last bytes of
      // the stream): psql would end inside the transaction, roll it back and exit 0, a restore that
      // "succeeds" and changes nothing. An error raised in that transaction fails it instead, with
      // this message from psql (exiting this child instead could cut what psql has yet to read).
      if (state === 'blobs' || lastCommitEnd === total) out.push(unfinished);
      return out.filter((b) => b.length > 0);
    },
  };
}

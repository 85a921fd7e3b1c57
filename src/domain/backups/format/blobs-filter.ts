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
// The functions are self-contained as a set (no imports, no outer names but each other's, all
// prefixed `bf`): the zlib child's program inlines their source text (blobsFilterSource), and the
// tests call them directly.

export interface BlobsFilter {
  /** Filtered bytes ready to pass on (the end of the chunk may be held back until more arrives). */
  push(chunk: Buffer): Buffer[];
  /** What is still held back, at the end of the stream (and a failing statement if a BEGIN left out had no COMMIT). */
  end(): Buffer[];
}

/** The filter's constants and its state across chunks. */
interface BfState {
  copyStart: Buffer;
  copyEnd: Buffer;
  header: Buffer;
  headerRest: Buffer;
  closing: Buffer;
  beginOut: Buffer;
  commitOut: Buffer;
  state: 'sql' | 'copy' | 'blobs';
  held: Buffer;
  // Stream offsets: bytes pushed so far, and the end of the last COMMIT left out.
  total: number;
  lastCommitEnd: number;
}

/** One scan of a buffer: what is passed on up to `emitted`, where it is, and the next matches (-1 none, undefined unknown). */
interface BfScan {
  buf: Buffer;
  base: number;
  final: boolean;
  out: Buffer[];
  emitted: number;
  pos: number;
  nextHeader: number | undefined;
  nextCopy: number | undefined;
}

// "BLOBS" (pg_dump ≤ 16), an OID or "first..last" (17): at most 10 + 2 + 10 characters.
function bfIsName(name: string): boolean {
  return name === 'BLOBS' || /^\d{1,10}(\.\.\d{1,10})?$/.test(name);
}

/** A header found at `at`: the pair's BEGIN left out when it is the BLOBS entry's; -1 to go on, or where to hold from. */
function bfHeader(st: BfState, sc: BfScan, at: number): number {
  const maxName = 22;
  const { buf } = sc;
  const nameAt = at + st.header.length;
  const semi = buf.indexOf(0x3b, nameAt); // ';'
  const restEnd = semi + st.headerRest.length;
  if ((semi < 0 || restEnd > buf.length) && !sc.final && buf.length - nameAt <= maxName + st.headerRest.length) {
    return at; // cut by the chunk boundary: decide when more arrives
  }
  const matches =
    semi >= 0 &&
    semi - nameAt <= maxName &&
    restEnd <= buf.length &&
    bfIsName(buf.toString('latin1', nameAt, semi)) &&
    buf.subarray(semi, restEnd).equals(st.headerRest);
  if (matches) {
    sc.out.push(buf.subarray(sc.emitted, restEnd - 'BEGIN;\n'.length), st.beginOut);
    sc.emitted = sc.pos = restEnd;
    st.state = 'blobs';
  } else {
    sc.pos = at + 1;
  }
  return -1;
}

/** Outside COPY and the pair: the next header or COPY start; -1 to go on, or where to hold from. */
function bfSql(st: BfState, sc: BfScan): number {
  const { buf, pos } = sc;
  if (sc.nextHeader === undefined || (sc.nextHeader >= 0 && sc.nextHeader < pos))
    sc.nextHeader = buf.indexOf(st.header, pos);
  if (sc.nextCopy === undefined || (sc.nextCopy >= 0 && sc.nextCopy < pos))
    sc.nextCopy = buf.indexOf(st.copyStart, pos);
  if (sc.nextHeader < 0 && sc.nextCopy < 0)
    return Math.max(pos, buf.length - (Math.max(st.header.length, st.copyStart.length) - 1));
  if (sc.nextCopy >= 0 && (sc.nextHeader < 0 || sc.nextCopy < sc.nextHeader)) {
    sc.pos = sc.nextCopy + st.copyStart.length;
    st.state = 'copy';
    return -1;
  }
  return bfHeader(st, sc, sc.nextHeader);
}

/** One step of the scan; -1 to go on, or where the undecided rest begins. */
function bfStep(st: BfState, sc: BfScan): number {
  const { buf } = sc;
  if (st.state === 'copy') {
    const at = buf.indexOf(st.copyEnd, sc.pos);
    if (at < 0) return Math.max(sc.pos, buf.length - (st.copyEnd.length - 1));
    // The end's last newline may begin the next header.
    sc.pos = at + st.copyEnd.length - 1;
    st.state = 'sql';
    return -1;
  }
  if (st.state === 'blobs') {
    const at = buf.indexOf(st.closing, sc.pos);
    if (at < 0) return Math.max(sc.pos, buf.length - (st.closing.length - 1));
    sc.out.push(buf.subarray(sc.emitted, at + 1), st.commitOut);
    sc.emitted = sc.pos = at + st.closing.length;
    st.lastCommitEnd = sc.base + sc.pos;
    st.state = 'sql';
    return -1;
  }
  return bfSql(st, sc);
}

/**
 * Scans `buf` (whose first byte is at stream offset `base`) from `start`, appending to `out` the
 * bytes decided, and answers where the undecided rest begins (at most ~90 bytes from the end:
 * a possible match cut by the end of `buf`), or `buf.length` when `final`.
 */
function bfScan(st: BfState, buf: Buffer, base: number, start: number, final: boolean, out: Buffer[]): number {
  const sc: BfScan = { buf, base, final, out, emitted: start, pos: start, nextHeader: undefined, nextCopy: undefined };
  let keepFrom = -1;
  while (keepFrom < 0) keepFrom = bfStep(st, sc);
  if (final) keepFrom = buf.length;
  out.push(buf.subarray(sc.emitted, keepFrom));
  return keepFrom;
}

/** Scans a chunk whose start continues the held bytes, and holds back its undecided end. */
function bfDrain(st: BfState, chunk: Buffer, start: number, out: Buffer[]): Buffer[] {
  const keepFrom = bfScan(st, chunk, st.total - chunk.length, start, false, out);
  // Copied, so the held bytes do not keep the whole chunk alive.
  st.held = Buffer.from(chunk.subarray(keepFrom));
  return out.filter((b) => b.length > 0);
}

function bfPush(st: BfState, chunk: Buffer): Buffer[] {
  // Bytes of a chunk scanned together with the held ones: more than the ~90 a match can need.
  const seam = 256;
  st.total += chunk.length;
  if (st.held.length === 0) return bfDrain(st, chunk, 0, []);
  if (chunk.length < seam) return bfDrain(st, Buffer.concat([st.held, chunk]), 0, []);
  // Rather than copy every chunk behind the held bytes, scan the held bytes with the chunk's
  // first `seam` bytes after them (enough to decide any match that starts in the held part),
  // then go on in the chunk itself from where that scan stopped.
  const out: Buffer[] = [];
  const window = Buffer.concat([st.held, chunk.subarray(0, seam)]);
  const stop = bfScan(st, window, st.total - chunk.length - st.held.length, 0, false, out);
  return bfDrain(st, chunk, stop - st.held.length, out);
}

function bfEnd(st: BfState): Buffer[] {
  const out: Buffer[] = [];
  bfScan(st, st.held, st.total - st.held.length, 0, true, out);
  st.held = Buffer.alloc(0);
  // A pair whose COMMIT never came has taken the restore's own final COMMIT (the last bytes of
  // the stream): psql would end inside the transaction, roll it back and exit 0, a restore that
  // "succeeds" and changes nothing. An error raised in that transaction fails it instead, with
  // this message from psql (exiting this child instead could cut what psql has yet to read).
  if (st.state === 'blobs' || st.lastCommitEnd === st.total)
    out.push(
      Buffer.from(
        "\nDO $cairn$ BEGIN RAISE EXCEPTION 'cairn: the dump''s large-object section has no COMMIT of its own; nothing was committed'; END $cairn$;\n",
      ),
    );
  return out.filter((b) => b.length > 0);
}

export function blobsTransactionFilter(): BlobsFilter {
  const note = ' -- left out by Cairn: the restore is one transaction\n';
  const st: BfState = {
    copyStart: Buffer.from('\n--\n\nCOPY '),
    copyEnd: Buffer.from('\n\\.\n'),
    header: Buffer.from('\n--\n-- Data for Name: '),
    headerRest: Buffer.from('; Type: BLOBS; Schema: -; Owner: -\n--\n\nBEGIN;\n'),
    closing: Buffer.from('\nCOMMIT;\n'),
    beginOut: Buffer.from(`-- BEGIN;${note}`),
    commitOut: Buffer.from(`-- COMMIT;${note}`),
    state: 'sql',
    held: Buffer.alloc(0),
    total: 0,
    lastCommitEnd: -1,
  };
  return { push: (chunk) => bfPush(st, chunk), end: () => bfEnd(st) };
}

/** The source text of the filter and its helpers, for the zlib child's program. */
export const blobsFilterSource = [
  bfIsName,
  bfHeader,
  bfSql,
  bfStep,
  bfScan,
  bfDrain,
  bfPush,
  bfEnd,
  blobsTransactionFilter,
]
  .map(String)
  .join('\n');

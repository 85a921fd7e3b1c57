// A zip reader for artifact bundles that never trusts the archive (APPNOTE.TXT, PKWARE's .ZIP
// File Format Specification): the central directory is read first and every entry's declared
// size, their total (also as a multiple of the archive's own size) and their number are held to
// limits before a byte is inflated; an entry is then inflated on its own, its inflated bytes
// counted, so one that inflates past what its header declares (a lying header) is stopped there,
// and its length and CRC-32 must match at the end.
// Memory is the directory and one entry's output, never the whole archive nor a bomb's payload.
import { pipeline } from 'node:stream/promises';
import { crc32, createInflateRaw } from 'node:zlib';

/** The archive's bytes by position (an artifact bundle's chunks in the store). */
export interface RandomAccess {
  readonly size: number;
  read(offset: number, length: number): Promise<Buffer>;
}

export interface ZipLimits {
  maxEntries: number;
  /** Declared and counted inflated bytes of one entry. */
  maxEntrySize: number;
  /** The sum of every entry's declared inflated size. */
  maxTotalSize: number;
  /**
   * The same sum as a multiple of the archive's own size, past `ratioGraceSize`: what a small
   * archive may declare is bounded by what it weighs, not only by `maxTotalSize`.
   */
  maxInflateRatio: number;
  /** Declared inflated bytes any archive may hold whatever its ratio (a tiny archive's headers weigh more than its text). */
  ratioGraceSize: number;
}

export interface ZipEntry {
  name: string;
  method: number;
  crc32: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

/** A refused archive or entry; the message names the entry and is meant for the uploader. */
export class ZipError extends Error {}

const sig = {
  eocd: 0x06054b50,
  zip64Locator: 0x07064b50,
  zip64Eocd: 0x06064b50,
  central: 0x02014b50,
  local: 0x04034b50,
};
const eocdSize = 22;
const maxCommentSize = 0xffff;
/** Entries are read as 256 KiB compressed slices: the store is read in steps, not an entry at once. */
const readStep = 256 * 1024;
/** Bytes a directory may spend per entry: the fixed 46, a name up to 1 KiB, 128 of extra field and comment. */
const directoryBytesPerEntry = 46 + 1024 + 128;

/** How an entry is named in a message: its path quoted (control characters escaped), cut short. */
export const entryLabel = (name: string): string => JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}…` : name);

const u64 = (b: Buffer, at: number): number => {
  const v = b.readBigUInt64LE(at);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new ZipError('the bundle declares an impossible size or offset');
  return Number(v);
};

/** The end-of-central-directory record (ZIP64's when the classic one overflows): where the directory is. */
async function directoryBounds(src: RandomAccess): Promise<{ entries: number; size: number; offset: number }> {
  const tailLength = Math.min(src.size, eocdSize + maxCommentSize);
  const tail = await src.read(src.size - tailLength, tailLength);
  let at = -1;
  for (let i = tail.length - eocdSize; i >= 0; i--) {
    if (tail.readUInt32LE(i) === sig.eocd && i + eocdSize + tail.readUInt16LE(i + 20) === tail.length) {
      at = i;
      break;
    }
  }
  if (at < 0) throw new ZipError('the bundle is not a zip file (no end of central directory)');
  let entries = tail.readUInt16LE(at + 10);
  let size = tail.readUInt32LE(at + 12);
  let offset = tail.readUInt32LE(at + 16);
  if (tail.readUInt16LE(at + 4) !== 0 || tail.readUInt16LE(at + 6) !== 0)
    throw new ZipError('the bundle is a multi-part zip file; send it as one');
  if (entries === 0xffff || size === 0xffffffff || offset === 0xffffffff) {
    const locatorAt = src.size - tailLength + at - 20;
    const locator = locatorAt >= 0 ? await src.read(locatorAt, 20) : Buffer.alloc(0);
    if (locator.length !== 20 || locator.readUInt32LE(0) !== sig.zip64Locator)
      throw new ZipError('the bundle is not a zip file (no ZIP64 end of central directory)');
    const recordAt = u64(locator, 8);
    if (recordAt + 56 > src.size) throw new ZipError('the bundle is not a zip file (ZIP64 record out of range)');
    const record = await src.read(recordAt, 56);
    if (record.readUInt32LE(0) !== sig.zip64Eocd)
      throw new ZipError('the bundle is not a zip file (no ZIP64 end of central directory)');
    entries = u64(record, 32);
    size = u64(record, 40);
    offset = u64(record, 48);
  }
  return { entries, size, offset };
}

/** Sizes and offset an entry keeps in its ZIP64 extra field (id 1) when the classic fields overflow. */
function zip64Values(extra: Buffer, entry: { size: number; compressedSize: number; localOffset: number }): void {
  for (let at = 0; at + 4 <= extra.length;) {
    const id = extra.readUInt16LE(at);
    const length = extra.readUInt16LE(at + 2);
    if (id === 1) {
      let p = at + 4;
      const next = (): number => {
        if (p + 8 > at + 4 + length || p + 8 > extra.length) throw new ZipError('a ZIP64 extra field is cut short');
        const v = u64(extra, p);
        p += 8;
        return v;
      };
      if (entry.size === 0xffffffff) entry.size = next();
      if (entry.compressedSize === 0xffffffff) entry.compressedSize = next();
      if (entry.localOffset === 0xffffffff) entry.localOffset = next();
      return;
    }
    at += 4 + length;
  }
}

/**
 * The archive's entries by name, from its central directory, once their number, each declared
 * size and the declared total (absolute, and as a multiple of the archive's size) are within
 * `limits`; nothing is inflated here.
 */
export async function readDirectory(src: RandomAccess, limits: ZipLimits): Promise<Map<string, ZipEntry>> {
  const bounds = await directoryBounds(src);
  if (bounds.entries > limits.maxEntries)
    throw new ZipError(
      `the bundle holds ${bounds.entries} files, more than the ${limits.maxEntries} a bundle may hold`,
    );
  if (bounds.offset + bounds.size > src.size)
    throw new ZipError('the bundle is not a zip file (its central directory is out of range)');
  if (bounds.size > bounds.entries * directoryBytesPerEntry + 4096)
    throw new ZipError(
      `the bundle's central directory is larger than ${bounds.entries} files need (names over 1 KiB?)`,
    );
  const dir = await src.read(bounds.offset, bounds.size);
  const entries = new Map<string, ZipEntry>();
  const byRatio = Math.max(limits.ratioGraceSize, limits.maxInflateRatio * src.size);
  /** Where the total passes the ratio; refused after the absolute limits, so that a bundle past one is told that one. */
  let overRatioAt: string | undefined;
  let total = 0;
  let at = 0;
  for (let i = 0; i < bounds.entries; i++) {
    if (at + 46 > dir.length || dir.readUInt32LE(at) !== sig.central)
      throw new ZipError('the bundle is not a zip file (its central directory is damaged)');
    const flags = dir.readUInt16LE(at + 8);
    const nameLength = dir.readUInt16LE(at + 28);
    const extraLength = dir.readUInt16LE(at + 30);
    const commentLength = dir.readUInt16LE(at + 32);
    const end = at + 46 + nameLength + extraLength + commentLength;
    if (end > dir.length) throw new ZipError('the bundle is not a zip file (its central directory is damaged)');
    const name = dir.toString(flags & 0x800 ? 'utf8' : 'latin1', at + 46, at + 46 + nameLength);
    const entry: ZipEntry = {
      name,
      method: dir.readUInt16LE(at + 10),
      crc32: dir.readUInt32LE(at + 16),
      compressedSize: dir.readUInt32LE(at + 20),
      size: dir.readUInt32LE(at + 24),
      localOffset: dir.readUInt32LE(at + 42),
    };
    zip64Values(dir.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength), entry);
    const label = entryLabel(name);
    if (flags & 1) throw new ZipError(`the bundle's file ${label} is encrypted`);
    if (entry.method !== 0 && entry.method !== 8)
      throw new ZipError(
        `the bundle's file ${label} uses compression method ${entry.method}; only stored and deflate are read`,
      );
    if (entry.size > limits.maxEntrySize)
      throw new ZipError(
        `the bundle's file ${label} declares ${entry.size} bytes, more than the ${limits.maxEntrySize} a file may have`,
      );
    total += entry.size;
    if (total > limits.maxTotalSize)
      throw new ZipError(
        `the bundle's files declare more than the ${limits.maxTotalSize} bytes a bundle may hold in all (at ${label})`,
      );
    overRatioAt ??= total > byRatio ? label : undefined;
    if (entry.localOffset + 30 + entry.compressedSize > bounds.offset)
      throw new ZipError(`the bundle's file ${label} lies outside the archive`);
    entries.set(name, entry);
    at = end;
  }
  if (overRatioAt)
    throw new ZipError(
      `the bundle's files declare more than the ${byRatio} bytes a bundle of ${src.size} bytes may hold inflated, ${limits.maxInflateRatio} times its size (at ${overRatioAt})`,
    );
  return entries;
}

/** Where the entry's compressed bytes start: after its local header, whose name and extra field vary. */
async function dataStart(src: RandomAccess, entry: ZipEntry): Promise<number> {
  const header = await src.read(entry.localOffset, 30);
  if (header.readUInt32LE(0) !== sig.local)
    throw new ZipError(`the bundle's file ${entryLabel(entry.name)} has no local header where the directory says`);
  const start = entry.localOffset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
  if (start + entry.compressedSize > src.size)
    throw new ZipError(`the bundle's file ${entryLabel(entry.name)} lies outside the archive`);
  return start;
}

async function* slices(src: RandomAccess, start: number, length: number): AsyncGenerator<Buffer> {
  for (let done = 0; done < length; done += readStep) yield src.read(start + done, Math.min(readStep, length - done));
}

/**
 * Inflates one entry, handing each piece to `sink` as it comes. The inflated bytes are counted:
 * one past the size the directory declared stops the inflation at once (so the declared size,
 * which `readDirectory` held to the limits, bounds the work whatever the compressed data says),
 * and at the end the count and the CRC-32 must be the declared ones.
 */
export async function inflateEntry(
  src: RandomAccess,
  entry: ZipEntry,
  sink: (piece: Buffer, offset: number) => void,
): Promise<void> {
  const label = entryLabel(entry.name);
  if (entry.method === 0 && entry.compressedSize !== entry.size)
    throw new ZipError(`the bundle's file ${label} is stored uncompressed but its sizes differ`);
  const start = await dataStart(src, entry);
  let count = 0;
  let crc = 0;
  const take = async (pieces: AsyncIterable<Buffer>): Promise<void> => {
    for await (const piece of pieces) {
      if (count + piece.length > entry.size)
        throw new ZipError(
          `the bundle's file ${label} inflates to more than the ${entry.size} bytes its header declares`,
        );
      crc = crc32(piece, crc);
      sink(piece, count);
      count += piece.length;
    }
  };
  try {
    if (entry.method === 0) await take(slices(src, start, entry.compressedSize));
    else await pipeline(slices(src, start, entry.compressedSize), createInflateRaw({ chunkSize: 64 * 1024 }), take);
  } catch (err) {
    if (err instanceof ZipError) throw err;
    const code = (err as { code?: string }).code;
    if (code?.startsWith('Z_'))
      throw new ZipError(`the bundle's file ${label} does not inflate: ${(err as Error).message}`);
    throw err;
  }
  if (count !== entry.size)
    throw new ZipError(
      `the bundle's file ${label} inflates to ${count} bytes, not the ${entry.size} its header declares`,
    );
  if (crc !== entry.crc32) throw new ZipError(`the bundle's file ${label} fails its CRC-32 check`);
}

/** One entry's inflated bytes (at most its declared size, which the limits bound). */
export async function readEntry(src: RandomAccess, entry: ZipEntry): Promise<Buffer> {
  const out = Buffer.allocUnsafe(entry.size);
  await inflateEntry(src, entry, (piece, offset) => piece.copy(out, offset));
  return out;
}

/** Checks one entry whole (count and CRC-32) without keeping its bytes. */
export const verifyEntry = (src: RandomAccess, entry: ZipEntry): Promise<void> => inflateEntry(src, entry, () => {});

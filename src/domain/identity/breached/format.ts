// The local breached-password store's format (pure functions, golden-tested). A SHA-1 digest is
// 40 hex digits: the first 5 name the range (HIBP's range API layout, 2^20 ranges), the other 35
// are packed into 18 bytes (the last nibble is zero) and kept sorted, so a range is one bytea that
// a binary search reads.
import { createHash } from 'node:crypto';

export const entryBytes = 18;

export function sha1Hex(password: string): string {
  return createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();
}

export function splitHash(hex: string): { prefix: number; suffix: Buffer } {
  return { prefix: Number.parseInt(hex.slice(0, 5), 16), suffix: Buffer.from(`${hex.slice(5)}0`, 'hex') };
}

/** Sorted, de-duplicated entries as one buffer. */
export function packSuffixes(suffixes: Iterable<Buffer>): Buffer {
  const sorted = [...suffixes].sort(Buffer.compare);
  const out: Buffer[] = [];
  for (const s of sorted) if (out.length === 0 || !out[out.length - 1]!.equals(s)) out.push(s);
  return Buffer.concat(out);
}

export function unpackSuffixes(packed: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i + entryBytes <= packed.length; i += entryBytes) out.push(packed.subarray(i, i + entryBytes));
  return out;
}

export function containsSuffix(packed: Buffer, suffix: Buffer): boolean {
  let lo = 0;
  let hi = Math.floor(packed.length / entryBytes) - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const cmp = Buffer.compare(packed.subarray(mid * entryBytes, (mid + 1) * entryBytes), suffix);
    if (cmp === 0) return true;
    if (cmp < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

export type ImportFormat = 'hibp' | 'plain';

/**
 * One line of an import file as a full SHA-1 hex digest, or undefined to skip it. `hibp` lines
 * are HIBP's range-dump form: `PREFIX` header lines are not used; a line is either a full
 * `SHA1:COUNT` (the downloadable dump) or `SUFFIX:COUNT` under the current range `prefix`.
 */
export function parseImportLine(line: string, format: ImportFormat, rangePrefix?: string): string | undefined {
  const text = line.replace(/\r$/, '');
  if (format === 'plain') return text.length > 0 ? sha1Hex(text) : undefined;
  const m = /^([0-9A-Fa-f]{35}|[0-9A-Fa-f]{40}):\d+\s*$/.exec(text);
  if (!m) return undefined;
  const hex = m[1]!.toUpperCase();
  if (hex.length === 40) return hex;
  return rangePrefix ? `${rangePrefix.toUpperCase()}${hex}` : undefined;
}

/** A HIBP range file names its range in its file name (`21BD1.txt`), as the downloader writes it. */
export function rangePrefixOf(fileName: string): string | undefined {
  return /(?:^|\/)([0-9A-Fa-f]{5})(?:\.txt)?$/.exec(fileName)?.[1];
}

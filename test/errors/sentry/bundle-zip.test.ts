// The artifact bundle's zip reader (sentry/cli/zip.ts) on arbitrary input: zips written by another
// library (fflate) read back byte for byte, deflated or stored; any damage to one (bytes changed,
// the file cut short) and any bytes at all end in a ZipError, never another exception, a read
// outside the archive or an entry longer than it declares.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import {
  readDirectory,
  readEntry,
  ZipError,
  type RandomAccess,
  type ZipLimits,
} from '../../../src/domain/errors/sentry/cli/zip.ts';

const limits: ZipLimits = {
  maxEntries: 50,
  maxEntrySize: 64 * 1024,
  maxTotalSize: 256 * 1024,
  maxInflateRatio: 20,
  ratioGraceSize: 256 * 1024,
};

/** The archive in memory; a read outside it throws a RangeError, which the reader must never cause. */
const inMemory = (bytes: Uint8Array): RandomAccess => ({
  size: bytes.length,
  read: async (offset, length) => {
    if (offset < 0 || length < 0 || offset + length > bytes.length) throw new RangeError('read outside the archive');
    return Buffer.from(bytes.buffer, bytes.byteOffset + offset, length);
  },
});

/** Every entry read whole; a refusal is a ZipError. */
async function readAll(bytes: Uint8Array): Promise<Map<string, Buffer>> {
  const src = inMemory(bytes);
  const out = new Map<string, Buffer>();
  for (const [name, entry] of await readDirectory(src, limits)) {
    const data = await readEntry(src, entry);
    expect(data.length).toBe(entry.size);
    expect(data.length).toBeLessThanOrEqual(limits.maxEntrySize);
    out.set(name, data);
  }
  return out;
}

const files = fc.dictionary(
  fc.stringMatching(/^[a-z0-9_./-]{1,40}$/).filter((n) => !n.endsWith('/') && n !== '__proto__'),
  fc.oneof(
    fc.uint8Array({ maxLength: 2000 }),
    fc.string({ maxLength: 2000 }).map((s) => new TextEncoder().encode(s)),
  ),
  { minKeys: 1, maxKeys: 8 },
);
const level = fc.constantFrom(0 as const, 6 as const, 9 as const);

describe('the bundle zip reader', () => {
  it('reads back what fflate wrote, deflated or stored', async () => {
    await fc.assert(
      fc.asyncProperty(files, level, async (f, lvl) => {
        const read = await readAll(zipSync(f, { level: lvl }));
        expect([...read.keys()].sort()).toEqual(Object.keys(f).sort());
        for (const [name, data] of read) expect(new Uint8Array(data)).toEqual(f[name]);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a damaged zip with a ZipError and nothing else', async () => {
    const damage = fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), {
      minLength: 1,
      maxLength: 6,
    });
    await fc.assert(
      fc.asyncProperty(files, level, damage, fc.option(fc.nat()), async (f, lvl, changes, cut) => {
        const bytes = zipSync(f, { level: lvl });
        for (const c of changes) bytes[c.at % bytes.length] = c.value;
        const damaged = cut === null ? bytes : bytes.subarray(0, cut % bytes.length);
        // Either it still reads whole (a change the CRC cannot see, in a name or unused field) or it is refused.
        await readAll(damaged).catch((err: unknown) => {
          if (!(err instanceof ZipError)) throw err;
        });
      }),
      { numRuns: 500 },
    );
  });

  it('refuses arbitrary bytes with a ZipError', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 4096 }), async (bytes) => {
        await expect(readAll(bytes)).rejects.toBeInstanceOf(ZipError);
      }),
      { numRuns: 300 },
    );
  });

  it('holds the declared sizes to the limits before inflating', async () => {
    const big = zipSync({ 'a.js': new Uint8Array(limits.maxEntrySize + 1) });
    await expect(readDirectory(inMemory(big), limits)).rejects.toThrow(/"a\.js" declares 65537 bytes, more than/);
    const many = zipSync(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`f${i}`, new Uint8Array(0)])));
    await expect(readDirectory(inMemory(many), limits)).rejects.toThrow(/holds 51 files, more than the 50/);
    const total = zipSync(
      Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`f${i}`, new Uint8Array(limits.maxEntrySize)])),
    );
    await expect(readDirectory(inMemory(total), limits)).rejects.toThrow(/in all \(at "f4"\)/);
  });

  it("holds the declared total to a multiple of the archive's size, past the grace", async () => {
    const small = { ...limits, ratioGraceSize: 16 * 1024 };
    const files = (fill: (n: number) => Uint8Array) =>
      Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`f${i}`, fill(8 * 1024)]));
    // 24 KiB of zeros in a few hundred bytes: within the grace until the third file.
    const zeros = zipSync(files((n) => new Uint8Array(n)));
    await expect(readDirectory(inMemory(zeros), small)).rejects.toThrow(
      new RegExp(
        `more than the 16384 bytes a bundle of ${zeros.length} bytes may hold inflated, 20 times its size \\(at "f2"\\)`,
      ),
    );
    // The same sizes that do not deflate: the archive weighs what it declares.
    const noise = zipSync(files((n) => new Uint8Array(randomBytes(n))));
    expect((await readDirectory(inMemory(noise), small)).size).toBe(3);
  });
});

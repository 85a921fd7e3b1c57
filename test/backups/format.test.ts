// The cairn-bk1 format and the version rule, as pure functions: a golden object (the format may
// not drift silently), round trips over arbitrary inputs, and every single-byte flip or cut refused.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BackupIntegrityError,
  decryptStream,
  encryptStream,
  makeHeader,
} from '../../src/domain/backups/format/format.ts';
import { checkDumpVersion, parseServerVersionNum, parseToolVersion } from '../../src/domain/backups/pgtools.ts';
import { collectParts } from '../../src/storage/parts.ts';

const golden = JSON.parse(readFileSync(new URL('./fixtures/cairn-bk1-golden.json', import.meta.url), 'utf8')) as {
  key_hex: string;
  segment_size: number;
  plaintext: string;
  object_hex: string;
};
const key = Buffer.from(golden.key_hex, 'hex');
const object = Buffer.from(golden.object_hex, 'hex');

async function collect(it: AsyncIterable<Buffer>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const c of it) out.push(c);
  return Buffer.concat(out);
}
async function* chunked(b: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < b.length; i += size) yield b.subarray(i, i + size);
}

describe('cairn-bk1', () => {
  it('encrypts the golden plaintext to the golden object', async () => {
    const header = makeHeader(golden.segment_size, Buffer.alloc(7, 0x22));
    const out = await collect(
      encryptStream(chunked(Buffer.from(golden.plaintext), 100), key, golden.segment_size, header),
    );
    expect(out.toString('hex')).toBe(golden.object_hex);
    expect(out.subarray(0, 8).toString()).toBe('CAIRNBK1');
  });

  it('decrypts the golden object whatever the chunking', async () => {
    for (const size of [1, 7, 1040, 5000]) {
      expect((await collect(decryptStream(chunked(object, size), key))).toString()).toBe(golden.plaintext);
    }
  });

  it('refuses every flipped byte and every cut of the golden object, and the wrong key', async () => {
    for (let i = 0; i < object.length; i += 13) {
      const bad = Buffer.from(object);
      bad[i]! ^= 0x04;
      await expect(collect(decryptStream(chunked(bad, 512), key))).rejects.toBeInstanceOf(BackupIntegrityError);
    }
    for (const cut of [0, 5, 20, 21, 20 + 1040, 20 + 2 * 1040, object.length - 1]) {
      await expect(collect(decryptStream(chunked(object.subarray(0, cut), 512), key))).rejects.toBeInstanceOf(
        BackupIntegrityError,
      );
    }
    await expect(collect(decryptStream(chunked(object, 512), Buffer.alloc(32, 0x12)))).rejects.toBeInstanceOf(
      BackupIntegrityError,
    );
  });

  it('round-trips any bytes at any segment size and chunking', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 6000 }),
        fc.integer({ min: 1024, max: 3000 }),
        fc.integer({ min: 1, max: 4000 }),
        async (plain, segment, chunk) => {
          const k = Buffer.alloc(32, 3);
          const sealed = await collect(encryptStream(chunked(Buffer.from(plain), chunk), k, segment));
          const opened = await collect(decryptStream(chunked(sealed, chunk), k));
          expect(opened.equals(Buffer.from(plain))).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('multipart parts', () => {
  it('cuts any stream into exact parts, the last one shorter, one empty part for nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ maxLength: 50 }), { maxLength: 20 }),
        fc.integer({ min: 1, max: 40 }),
        async (chunks, size) => {
          const parts: Buffer[] = [];
          for await (const p of collectParts(
            (async function* () {
              for (const c of chunks) yield Buffer.from(c);
            })(),
            size,
          ))
            parts.push(p);
          const all = Buffer.concat(chunks.map((c) => Buffer.from(c)));
          expect(Buffer.concat(parts).equals(all)).toBe(true);
          expect(parts.slice(0, -1).every((p) => p.length === size)).toBe(true);
          expect(parts.length).toBe(Math.max(1, Math.ceil(all.length / size)));
        },
      ),
    );
  });
});

describe('pg_dump versions', () => {
  it('parses tool and server versions', () => {
    expect(parseToolVersion('pg_dump (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)\n')).toEqual({
      major: 15,
      text: '15.20',
    });
    expect(parseToolVersion('psql (PostgreSQL) 17beta1')).toEqual({ major: 17, text: '17' });
    expect(parseToolVersion('something else')).toBeUndefined();
    expect(parseServerVersionNum(150020)).toEqual({ major: 15, text: '15.20' });
    expect(parseServerVersionNum(160002)).toEqual({ major: 16, text: '16.2' });
    expect(parseServerVersionNum(90624)).toEqual({ major: 9, text: '9.6.24' });
  });

  it('refuses a pg_dump older than the server, naming both', () => {
    expect(() => checkDumpVersion({ major: 15, text: '15.20' }, { major: 16, text: '16.2' })).toThrow(
      'pg_dump 15.20 is older than the database server (PostgreSQL 16.2); install pg_dump 16 or newer on the worker',
    );
    expect(() => checkDumpVersion({ major: 16, text: '16.1' }, { major: 15, text: '15.20' })).not.toThrow();
    expect(() => checkDumpVersion({ major: 15, text: '15.2' }, { major: 15, text: '15.20' })).not.toThrow();
  });
});

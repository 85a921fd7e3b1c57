// The backup's compressor writes its blocks as a series of gzip members, deflated side by side
// and written in order: what comes out is one gzip file that GNU gunzip and Node's Gunzip read
// back byte for byte, whatever the size (nothing, one byte, a block exactly, many blocks and a
// rest), with the compressor's count and hash of what went in. Through the real child process.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { gunzipSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { gzipBlockBytes, spawnZlib, type SqlFigures } from '../../src/domain/backups/zlib-child.ts';

async function compress(input: Buffer): Promise<{ out: Buffer; report: SqlFigures }> {
  const { child, report } = spawnZlib('gzip', 'pipe');
  const chunks: Buffer[] = [];
  child.stdout!.on('data', (c: Buffer) => chunks.push(c));
  child.stderr!.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  // Written in uneven pieces, as a pipe from pg_dump delivers them.
  for (let at = 0; at < input.length; at += 65_000 + (at % 7))
    child.stdin!.write(input.subarray(at, at + 65_000 + (at % 7)));
  child.stdin!.end();
  expect(await exited).toBe(0);
  return { out: Buffer.concat(chunks), report: (await report) as SqlFigures };
}

/**
 * The gzip members in `gz`: each is a 10-byte header (zlib writes no optional fields), a raw
 * deflate stream (inflated on its own to learn where it ends) and an 8-byte trailer.
 */
function members(gz: Buffer): number {
  let n = 0;
  for (let at = 0; at < gz.length; n++) {
    expect([...gz.subarray(at, at + 4)]).toEqual([0x1f, 0x8b, 0x08, 0x00]);
    const { engine } = inflateRawSync(gz.subarray(at + 10), { info: true }) as unknown as {
      engine: { bytesWritten: number };
    };
    at += 10 + engine.bytesWritten + 8;
  }
  return n;
}

const text = (n: number) => {
  const line = Buffer.from('42\tsome row of text\t2026-11-28 12:00:00+00\t{"a": [1, 2, 3]}\n');
  const b = Buffer.alloc(n);
  for (let at = 0; at < n; at += line.length) line.copy(b, at);
  return b;
};

describe('the parallel gzip compressor', () => {
  const cases: [string, Buffer][] = [
    ['nothing', Buffer.alloc(0)],
    ['one byte', Buffer.from('x')],
    ['one block exactly', text(gzipBlockBytes)],
    [
      'three blocks and a rest, text and random bytes',
      Buffer.concat([text(2 * gzipBlockBytes), randomBytes(gzipBlockBytes + 12_345)]),
    ],
  ];
  it.each(cases)('%s: gunzip and Node read back every byte, in order', async (_name, input) => {
    const { out, report } = await compress(input);
    expect(gunzipSync(out).equals(input)).toBe(true);
    expect(execFileSync('gunzip', ['-c'], { input: out, maxBuffer: 64 * 1024 * 1024 }).equals(input)).toBe(true);
    expect(report).toEqual({ bytes: input.length, sha256: createHash('sha256').update(input).digest('hex') });
  });

  it('writes a member per block of at least a MiB (one at least), so the blocks were deflated apart', async () => {
    // Past the 4 blocks deflated at once (the oldest is then awaited before the next is cut) and
    // past the full GC every 8 blocks.
    const input = Buffer.concat([text(11 * gzipBlockBytes), randomBytes(gzipBlockBytes / 2)]);
    const { out, report } = await compress(input);
    expect(gunzipSync(out).equals(input)).toBe(true);
    expect(report.bytes).toBe(input.length);
    // A block is cut once it holds a MiB: with pieces of ~64 KB, each holds a little more.
    expect(members(out)).toBeGreaterThanOrEqual(Math.floor(input.length / (gzipBlockBytes + 65_006)));
    expect(members(out)).toBeLessThanOrEqual(Math.ceil(input.length / gzipBlockBytes));
    expect(members((await compress(Buffer.alloc(0))).out)).toBe(1);
    // Still compressed as gzip -6 would: repetitive text to a small fraction.
    expect(out.length).toBeLessThan(input.length / 10);
  });
});

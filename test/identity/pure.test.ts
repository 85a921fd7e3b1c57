// Pure identity rules against golden fixtures: RFC 6238 vectors with the ±1-step window and the
// replay floor, the password policy, the breached store's packing and parsing, page tokens,
// recovery codes.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  containsSuffix,
  packSuffixes,
  parseImportLine,
  rangePrefixOf,
  sha1Hex,
  splitHash,
  unpackSuffixes,
} from '../../src/domain/identity/breached/format.ts';
import { isCommonPassword } from '../../src/domain/identity/breached/breached.ts';
import { readPageToken, signPageToken } from '../../src/http/paginate.ts';

const isString = (v: unknown): v is string => typeof v === 'string';
const encodePageToken = (key: Buffer, id: string): string => signPageToken(key, 'end_users', id);
const decodePageToken = (key: Buffer, token: string | undefined): string | undefined =>
  readPageToken(key, 'end_users', token, isString);
import { passwordProblem } from '../../src/domain/identity/passwords.ts';
import { hashRecoveryCode, newRecoveryCode, verifyTotp } from '../../src/domain/identity/factors/totp.ts';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

describe('TOTP (RFC 6238)', () => {
  const rfc = JSON.parse(fixture('rfc6238.json')) as { secret: string; vectors: { time: number; code: string }[] };
  for (const v of rfc.vectors) {
    it(`accepts ${v.code} at T=${v.time} and one step either side, not two`, async () => {
      const step = Math.floor(v.time / 30);
      expect(await verifyTotp(rfc.secret, v.code, v.time)).toBe(step);
      expect(await verifyTotp(rfc.secret, v.code, v.time + 30)).toBe(step);
      expect(await verifyTotp(rfc.secret, v.code, v.time - 30)).toBe(step);
      expect(await verifyTotp(rfc.secret, v.code, v.time + 60)).toBeUndefined();
      // RFC 6238 §5.2: a step at or below the last accepted one is a replay.
      expect(await verifyTotp(rfc.secret, v.code, v.time, step)).toBeUndefined();
      expect(await verifyTotp(rfc.secret, v.code, v.time, step - 1)).toBe(step);
    });
  }
  it('refuses codes that are not six digits', async () => {
    for (const code of ['', '12345', '1234567', 'abcdef', ' 28708'])
      expect(await verifyTotp(rfc.secret, code, 59)).toBeUndefined();
  });
});

describe('password policy (NIST SP 800-63B rev 4)', () => {
  it('asks 15 characters, or 8 with a required second factor, at most 256, no composition rules', () => {
    expect(passwordProblem('a'.repeat(14), false)).toMatch(/at least 15/);
    expect(passwordProblem('a'.repeat(15), false)).toBeUndefined();
    expect(passwordProblem('a'.repeat(8), true)).toBeUndefined();
    expect(passwordProblem('a'.repeat(7), true)).toMatch(/at least 8/);
    expect(passwordProblem('a'.repeat(257), false)).toMatch(/at most 256/);
    // Code points, not UTF-16 units: 15 emoji are 15 characters.
    expect(passwordProblem('🔒'.repeat(15), false)).toBeUndefined();
  });
  it('knows the bundled common passwords whatever their case', () => {
    expect(isCommonPassword('passwordpassword')).toBe(true);
    expect(isCommonPassword('PasswordPassword')).toBe(true);
    expect(isCommonPassword('correct horse battery staple 42')).toBe(false);
  });
});

describe('breached store format', () => {
  it('packs, sorts, de-duplicates and finds suffixes', () => {
    const hashes = ['password', 'letmein', 'dragon', 'password'].map(sha1Hex);
    expect(hashes[0]).toBe('5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8');
    const parts = hashes.map(splitHash);
    expect(parts[0]).toEqual({ prefix: 0x5baa6, suffix: Buffer.from('1E4C9B93F3F0682250B6CF8331B7EE68FD80', 'hex') });
    const packed = packSuffixes(parts.map((p) => p.suffix));
    expect(packed.length).toBe(3 * 18);
    expect(unpackSuffixes(packed)).toEqual([...unpackSuffixes(packed)].sort(Buffer.compare));
    for (const p of parts) expect(containsSuffix(packed, p.suffix)).toBe(true);
    expect(containsSuffix(packed, splitHash(sha1Hex('not in here')).suffix)).toBe(false);
    expect(containsSuffix(Buffer.alloc(0), parts[0]!.suffix)).toBe(false);
  });
  it('parses HIBP range files, full-hash dumps and plain lists', () => {
    const prefix = rangePrefixOf('/tmp/dump/21BD1.txt');
    expect(prefix).toBe('21BD1');
    const lines = fixture('breached-hibp-21BD1.txt')
      .split('\n')
      .map((l) => parseImportLine(l, 'hibp', prefix));
    expect(lines.filter(Boolean)).toEqual([
      '21BD10018A45C4D1DEF81644B54AB7F969B88D65',
      '21BD100D4F6E8FA6EECAD2A3AA415EEC418D38EC',
      '21BD1011053FD0102E94D6AE2F8B83D76FAF94F6',
      '21BD1012A7CA357541F0AC487871FEEC1891C49C',
    ]);
    expect(parseImportLine('5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8:9545824', 'hibp')).toBe(
      '5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8',
    );
    expect(parseImportLine('0018A45C4D1DEF81644B54AB7F969B88D65:1', 'hibp')).toBeUndefined();
    expect(parseImportLine('password\r', 'plain')).toBe('5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8');
    expect(parseImportLine('', 'plain')).toBeUndefined();
  });
});

describe('page tokens and recovery codes', () => {
  const key = Buffer.alloc(32, 1);
  it('round-trip, and refuse any tampering', () => {
    const token = encodePageToken(key, 'eu_01jd0000000000000000000000');
    expect(decodePageToken(key, token)).toBe('eu_01jd0000000000000000000000');
    expect(decodePageToken(key, undefined)).toBeUndefined();
    for (const bad of [`${token}x`, `A${token.slice(1)}`, 'abc', '.', encodePageToken(Buffer.alloc(32, 2), 'eu_x')]) {
      expect(() => decodePageToken(key, bad)).toThrow(/page_token/);
    }
  });
  it('recovery codes carry 60 bits and hash the same however typed', () => {
    const codes = new Set(Array.from({ length: 200 }, newRecoveryCode));
    expect(codes.size).toBe(200);
    const c = [...codes][0]!;
    expect(c).toMatch(/^[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}$/);
    expect(hashRecoveryCode(c.toUpperCase().replace(/-/g, ' '))).toEqual(hashRecoveryCode(c));
  });
});

// Resource ids (src/ids.ts): ULIDs from a pooled CSPRNG, lower-cased.
import { describe, expect, it } from 'vitest';
import { newId, newUlid, ulidTime } from '../src/ids.ts';

describe('ids', () => {
  it('are 26 lower-case Crockford characters that carry their time and sort by it', () => {
    const t = Date.UTC(2026, 10, 26, 12, 0, 0);
    const a = newUlid(t);
    const b = newUlid(t + 1);
    expect(a).toMatch(/^[0-9abcdefghjkmnpqrstvwxyz]{26}$/);
    expect(ulidTime(a)).toBe(t);
    expect(a < b).toBe(true);
    expect(newId('ck')).toMatch(/^ck_[0-9a-z]{26}$/);
  });

  it('never repeat, and draw every random character evenly', () => {
    const seen = new Set<string>();
    const counts = new Map<string, number>();
    const start = Date.UTC(2030, 0, 1); // after every id made before, so none is an increment
    // A new millisecond each time, so each id draws a fresh random part (the same millisecond only increments it).
    for (let i = 0; i < 20_000; i++) {
      const id = newUlid(start + i);
      seen.add(id);
      for (const c of id.slice(10)) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    expect(seen.size).toBe(20_000);
    expect(counts.size).toBe(32);
    // 320,000 draws over 32 characters: 10,000 each expected; 5 % either way is > 15 standard deviations.
    for (const n of counts.values()) expect(Math.abs(n - 10_000)).toBeLessThan(500);
  });
});

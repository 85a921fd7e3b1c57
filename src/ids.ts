// Resource ids are a type prefix and a ULID (time-ordered, 128 bits), lower-cased for URLs.
import { randomPoolByte } from './crypto.ts';
import { decodeTime, monotonicFactory } from 'ulid';

// ulid's own PRNG asks crypto.getRandomValues for one byte per character: 16 calls per new
// millisecond, 7% of a web process's CPU under single captures (measured, bench/errors.ts). The
// same CSPRNG through crypto.ts's pool. A byte / 256 is in [0, 1), and x 32 picks each character
// of Crockford's alphabet with the same odds (256 is a multiple of 32).
const pooledRandom = (): number => randomPoolByte() / 256;

const next = monotonicFactory(pooledRandom);

export function newUlid(now: number = Date.now()): string {
  return next(now).toLowerCase();
}

export function newId(prefix: string, now?: number): string {
  return `${prefix}_${newUlid(now)}`;
}

/** When a ULID was made (ms since the epoch); undefined when `ulid` is not one. */
export function ulidTime(ulid: string): number | undefined {
  try {
    return decodeTime(ulid.toUpperCase());
  } catch {
    return undefined;
  }
}

/**
 * A W3C trace-context trace (32) or span (16) id: lower-case hex, and not all zeros
 * (https://www.w3.org/TR/trace-context/ §3.2.2.3, §3.2.2.4).
 */
export const isHexId = (v: string, length: 16 | 32): boolean =>
  v.length === length && /^[0-9a-f]+$/.test(v) && /[1-9a-f]/.test(v);

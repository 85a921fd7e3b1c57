// Resource ids are a type prefix and a ULID (time-ordered, 128 bits), lower-cased for URLs.
import { decodeTime, monotonicFactory } from 'ulid';

const next = monotonicFactory();

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

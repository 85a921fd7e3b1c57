// Resource ids are a type prefix and a ULID (time-ordered, 128 bits), lower-cased for URLs.
import { monotonicFactory } from 'ulid';

const next = monotonicFactory();

export function newUlid(now: number = Date.now()): string {
  return next(now).toLowerCase();
}

export function newId(prefix: string, now?: number): string {
  return `${prefix}_${newUlid(now)}`;
}

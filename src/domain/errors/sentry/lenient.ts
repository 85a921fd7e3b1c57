// How a Sentry event's values are read: leniently, as relay reads them (a value of the wrong kind
// is dropped, never a 400), and cut to capture's limits. One place for event.ts, frames.ts and legacy.ts.
export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A non-empty string, or a number as text, cut to `max`. */
export const str = (v: unknown, max: number): string | undefined =>
  typeof v === 'string' && v !== '' ? v.slice(0, max) : typeof v === 'number' ? String(v).slice(0, max) : undefined;

/** A line or column number: a positive integer in range. */
export const int = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 100_000_000 ? v : undefined;

// Every list pages the same way (docs/api.md "Lists", Google AIP-158): `page_size` and an opaque
// `page_token` in, the items and `next_page_token` out. The token carries the keyset position of
// the last item, signed (http/paginate.ts); a Keyset says what position a list's rows have and
// what a token of that list may carry, under its own `purpose` so tokens never cross lists.
import { z } from 'zod';

export const pageQuery = z.object({
  page_size: z.coerce.number().int().min(1).max(1000).default(50),
  page_token: z.string().max(512).optional(),
});
export type PageQuery = z.output<typeof pageQuery>;

/** `{ [collection]: Item[], next_page_token? }`, the shape of every list answer. */
export function pageOf<C extends string, I extends z.ZodType>(collection: C, item: I) {
  return z.object({ [collection]: z.array(item), next_page_token: z.string().optional() } as {
    [K in C]: z.ZodArray<I>;
  } & { next_page_token: z.ZodOptional<z.ZodString> });
}

/** How one list orders its rows: the position of a row, and what a token may carry. */
export interface Keyset<Row, P> {
  purpose: string;
  positionOf(row: Row): P;
  isPosition(v: unknown): v is P;
}

/** Lists sorted by id alone (ULIDs sort by time): the position is the last id. */
export function byId<Row extends { id: string }>(purpose: string): Keyset<Row, string> {
  return { purpose, positionOf: (row) => row.id, isPosition: (v): v is string => typeof v === 'string' };
}

/** A sort time and an id, for lists ordered by a time that several rows may share. */
export interface TimePosition {
  t: string;
  id: string;
}

export function byTimeAndId<Row>(purpose: string, positionOf: (row: Row) => TimePosition): Keyset<Row, TimePosition> {
  return {
    purpose,
    positionOf,
    isPosition: (v): v is TimePosition =>
      typeof v === 'object' &&
      v !== null &&
      typeof (v as TimePosition).t === 'string' &&
      typeof (v as TimePosition).id === 'string',
  };
}

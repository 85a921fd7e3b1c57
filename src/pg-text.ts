// What Postgres text and jsonb cannot hold: U+0000, and an unpaired UTF-16 surrogate (which has
// no UTF-8 form). Checked at the edge for every request (http/unstorable.ts) and wherever a value
// from elsewhere (an uploaded bundle's file names) becomes text in a row.

/** True for U+0000 or an unpaired surrogate. */
export function unstorable(s: string): boolean {
  return s.includes('\0') || !s.isWellFormed();
}

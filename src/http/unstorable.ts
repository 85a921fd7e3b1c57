// One rule at the edge for every request, whatever carries it (JSON body, form, query, path):
// Postgres text and jsonb cannot hold U+0000 or an unpaired UTF-16 surrogate, so a value with one
// is refused (400 invalid_request, naming the field) before it reaches a handler, rather than
// failing halfway through a write. Free text that is stored as sent (error events: routes marked
// `freeText`) gets U+FFFD instead, in its own schema (domain/errors/intake/captured-event.ts `storable`).
import { AppError } from '../app-error.ts';
import { unstorable } from '../pg-text.ts';

/**
 * The path of the first string (or object key) Postgres cannot store, or undefined. It recurses
 * once a level: every JSON body reaching it was refused past 64 levels before it was parsed
 * (json-limits.ts), forms are 5 levels at most (qs), queries and paths are flat.
 */
export function findUnstorable(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return unstorable(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorable(value[i], `${path}.${i}`);
      if (found) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (unstorable(k)) return `${path}.${k.toWellFormed().replace(/\0/g, '\uFFFD')}`;
      const found = findUnstorable(v, `${path}.${k}`);
      if (found) return found;
    }
  }
  return undefined;
}

/** Throws invalid_request naming the field when any part holds such a character. */
export function refuseUnstorable(parts: Record<string, unknown>): void {
  for (const [where, value] of Object.entries(parts)) {
    const field = findUnstorable(value, where);
    if (field) {
      throw new AppError(
        'invalid_request',
        `${field} holds a character that cannot be stored (U+0000 or an unpaired surrogate)`,
        {
          details: { fields: [{ field, message: 'U+0000 and unpaired surrogates are not accepted' }] },
        },
      );
    }
  }
}

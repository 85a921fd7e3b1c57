// The error-group search language's parsed form (docs/api.md "Search"): a list of terms that must
// all hold. parse.ts reads a query into it, print.ts writes it back, queries.ts compiles it to SQL.
import type { ErrorGroupState } from '../../../contract/errors.ts';

/** The filters with a meaning of their own; any other `key:value` is a tag of that key. */
export const searchFilters = ['release', 'service', 'user', 'level', 'first_release'] as const;
export type SearchFilter = (typeof searchFilters)[number];

export type SearchTerm =
  /** A bare word or a quoted phrase: in the group's title ("Type: message") or culprit, any case. */
  | { kind: 'text'; text: string }
  /** `is:<state>`. */
  | { kind: 'is'; state: ErrorGroupState; negated: boolean }
  | { kind: SearchFilter; value: string; negated: boolean }
  /** `<key>:<value>`, any other key: a tag the group's events carried. */
  | { kind: 'tag'; key: string; value: string; negated: boolean };

/**
 * Bounds of a query: a search runs one semi-join per term, so the terms are few, and what a term
 * holds is bounded by what is stored (tag keys are 1-32 characters, tag values, releases and
 * service names at most 200: docs/api.md "Capture is validated at the edge").
 */
export const searchLimits = { queryBytes: 1024, terms: 20, keyChars: 32, valueChars: 200 } as const;

/** A filter's key: a tag key's characters less `:`, which ends the key. */
export const searchKeyPattern = /^[A-Za-z0-9_.-]+$/;

/** The separator between terms: any white space (the same test for parse and print). */
export const isSpace = (c: string | undefined): boolean => c !== undefined && /^\s$/u.test(c);

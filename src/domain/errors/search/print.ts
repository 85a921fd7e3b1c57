// A search's terms written back as a query (parse.ts reads it to the same terms): the canonical
// form page tokens are bound to, so two spellings of one search page alike, and the form an alert
// rule or a link shows.
import { isSpace, type SearchTerm } from './types.ts';

const quote = (s: string): string => `"${s.replace(/[\\"]/g, '\\$&')}"`;

const hasSpace = (s: string): boolean => [...s].some((c) => isSpace(c));

/** A value as it is, unless a reader would take it otherwise: then quoted. */
const value = (v: string): string => (v === '' || v.includes('"') || hasSpace(v) ? quote(v) : v);

/** Text as a bare word, unless it would read as a filter, a negation or a quoted phrase. */
const text = (t: string): string =>
  t === '' || t.startsWith('!') || t.includes(':') || t.includes('"') || hasSpace(t) ? quote(t) : t;

export function printTerm(t: SearchTerm): string {
  if (t.kind === 'text') return text(t.text);
  const not = t.negated ? '!' : '';
  if (t.kind === 'is') return `${not}is:${t.state}`;
  if (t.kind === 'tag') return `${not}${t.key}:${value(t.value)}`;
  return `${not}${t.kind}:${value(t.value)}`;
}

export const printSearch = (terms: readonly SearchTerm[]): string => terms.map(printTerm).join(' ');

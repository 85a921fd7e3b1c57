// The error-group search language (docs/api.md "Search"), read into terms (types.ts). Terms are
// separated by white space and must all hold. A bare word or a "quoted phrase" is text; `key:value`
// is a filter (`is:`, `release:`, `service:`, `user:`, `level:`, `first_release:`, else a tag); a
// value may be quoted; `!key:value` negates. `!` applies to filters only, as in Sentry's search: a
// bare `!word` is refused (quote it to look for the text), never read as "not the word".
// Every refusal is invalid_request naming the term and `query.q`, so every reader of the language
// (the API, and through it the CLI; the console) says the same thing about the same string.
import { AppError } from '../../../app-error.ts';
import type { ErrorGroupState } from '../../../contract/errors.ts';
import { isSpace, searchFilters, searchKeyPattern, searchLimits, type SearchFilter, type SearchTerm } from './types.ts';

const states: readonly string[] = ['unresolved', 'acknowledged', 'resolved'];

/** The words of a term as the user wrote them, for a message (long ones cut, never inside a character). */
function shown(raw: string): string {
  const chars = [...raw];
  return chars.length > 64 ? `${chars.slice(0, 64).join('')}…` : raw;
}

function refuse(message: string, term?: string): AppError {
  const named = term === undefined ? '' : `term ${JSON.stringify(shown(term))}: `;
  return new AppError('invalid_request', `q: ${named}${message}`, {
    details: { field: 'query.q', ...(term === undefined ? {} : { term: shown(term) }) },
  });
}

/** Reads queries one term at a time; `start` is where the current term began. */
class Reader {
  i = 0;
  start = 0;
  readonly s: string;
  constructor(s: string) {
    this.s = s;
  }

  /** The current term as written: up to the next white space, or to the end from an open quote. */
  raw(toEnd = false): string {
    if (toEnd) return this.s.slice(this.start);
    let j = Math.max(this.i, this.start + 1);
    while (j < this.s.length && !isSpace(this.s[j])) j++;
    return this.s.slice(this.start, j);
  }

  fail(message: string, toEnd = false): AppError {
    return refuse(message, this.raw(toEnd));
  }

  /** A quoted string from its opening quote: `\"` and `\\` are escapes; another `\` stays as it is. */
  quoted(): string {
    let out = '';
    for (this.i++; this.i < this.s.length; this.i++) {
      const c = this.s[this.i]!;
      if (c === '"') {
        this.i++;
        if (this.i < this.s.length && !isSpace(this.s[this.i])) throw this.fail('a closing quote must end the term');
        return out;
      }
      const next = this.s[this.i + 1];
      if (c === '\\' && (next === '"' || next === '\\')) {
        out += next;
        this.i++;
      } else out += c;
    }
    throw this.fail('the quote is not closed', true);
  }

  /** Unquoted characters up to white space, `stop` or the end. */
  word(stop: string): string {
    const from = this.i;
    while (this.i < this.s.length && !isSpace(this.s[this.i]) && !stop.includes(this.s[this.i]!)) this.i++;
    return this.s.slice(from, this.i);
  }
}

function filterTerm(r: Reader, key: string, negated: boolean): SearchTerm {
  if (key === '') throw r.fail('a filter needs a key before the colon; quote text that holds a colon');
  if (key.length > searchLimits.keyChars) throw r.fail(`a key is at most ${searchLimits.keyChars} characters`);
  if (!searchKeyPattern.test(key)) throw r.fail('a key is letters, digits, _ . and -; quote text that holds a colon');
  r.i++; // the colon
  const value = r.s[r.i] === '"' ? r.quoted() : r.word('"');
  if (r.s[r.i] === '"') throw r.fail('a quote must open the value; quote the whole value');
  if (value === '') throw r.fail(`${key}: needs a value`);
  if (value.length > searchLimits.valueChars) throw r.fail(`a value is at most ${searchLimits.valueChars} characters`);
  if (key === 'is') {
    if (!states.includes(value)) throw r.fail('is: takes unresolved, acknowledged or resolved');
    return { kind: 'is', state: value as ErrorGroupState, negated };
  }
  if ((searchFilters as readonly string[]).includes(key)) return { kind: key as SearchFilter, value, negated };
  return { kind: 'tag', key, value, negated };
}

function term(r: Reader): SearchTerm {
  const negated = r.s[r.i] === '!';
  if (negated) r.i++;
  const notText = '! applies to key:value filters only; quote the text to look for it';
  if (r.s[r.i] === '"') {
    const text = r.quoted();
    if (negated) throw r.fail(notText);
    if (text === '') throw r.fail('an empty phrase');
    return { kind: 'text', text };
  }
  const word = r.word(':"');
  if (r.s[r.i] === ':') return filterTerm(r, word, negated);
  if (r.s[r.i] === '"') throw r.fail('a quote must open the term; quote the whole term');
  if (negated) throw r.fail(word === '' ? 'a lone !' : notText);
  return { kind: 'text', text: word };
}

/** The terms of a query (none for an empty one); invalid_request naming the term otherwise. */
export function parseSearch(q: string): SearchTerm[] {
  const bytes = Buffer.byteLength(q);
  if (bytes > searchLimits.queryBytes) throw refuse(`the query is ${bytes} bytes; at most ${searchLimits.queryBytes}`);
  // Postgres stores neither (a text value cannot hold U+0000, nor UTF-8 a lone surrogate).
  if (q.includes('\0')) throw refuse('the query holds U+0000');
  if (!q.isWellFormed()) throw refuse('the query holds a lone surrogate (not Unicode text)');
  const r = new Reader(q);
  const terms: SearchTerm[] = [];
  for (;;) {
    while (isSpace(q[r.i])) r.i++;
    if (r.i >= q.length) return terms;
    r.start = r.i;
    if (terms.length === searchLimits.terms) throw r.fail(`a query has at most ${searchLimits.terms} terms`);
    terms.push(term(r));
  }
}

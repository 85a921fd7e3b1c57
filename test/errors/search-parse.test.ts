// The search language's parser (docs/api.md "Search") against a table of queries and the terms or
// the refusal each gives, and its properties: nothing but invalid_request is ever thrown, and a
// printed query parses back to its terms.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/app-error.ts';
import { parseSearch } from '../../src/domain/errors/search/parse.ts';
import { printSearch } from '../../src/domain/errors/search/print.ts';
import { searchFilters, searchLimits, type SearchTerm } from '../../src/domain/errors/search/types.ts';

const text = (t: string): SearchTerm => ({ kind: 'text', text: t });
const tag = (key: string, value: string, negated = false): SearchTerm => ({ kind: 'tag', key, value, negated });

const parsed: [string, SearchTerm[]][] = [
  ['', []],
  ['   \t\n ', []],
  ['TypeError', [text('TypeError')]],
  ['  cannot   read ', [text('cannot'), text('read')]],
  ['"cannot read properties"', [text('cannot read properties')]],
  ['"say \\"hi\\" \\\\ C:\\dir"', [text('say "hi" \\ C:\\dir')]],
  ['"a:b" "!x"', [text('a:b'), text('!x')]],
  ['wow! 50%_off', [text('wow!'), text('50%_off')]],
  ['is:unresolved', [{ kind: 'is', state: 'unresolved', negated: false }]],
  [
    '!is:resolved is:acknowledged',
    [
      { kind: 'is', state: 'resolved', negated: true },
      { kind: 'is', state: 'acknowledged', negated: false },
    ],
  ],
  ['release:shop@1.2.0', [{ kind: 'release', value: 'shop@1.2.0', negated: false }]],
  ['first_release:shop@1.0', [{ kind: 'first_release', value: 'shop@1.0', negated: false }]],
  [
    'service:api !level:warning',
    [
      { kind: 'service', value: 'api', negated: false },
      { kind: 'level', value: 'warning', negated: true },
    ],
  ],
  [
    'user:ada@example.com user:42',
    [
      { kind: 'user', value: 'ada@example.com', negated: false },
      { kind: 'user', value: '42', negated: false },
    ],
  ],
  ['browser:Chrome !tenant:acme', [tag('browser', 'Chrome'), tag('tenant', 'acme', true)]],
  ['url:https://x.io/a?b=c', [tag('url', 'https://x.io/a?b=c')]],
  ['browser:"Mobile Safari" os.name:"iOS \\"17\\""', [tag('browser', 'Mobile Safari'), tag('os.name', 'iOS "17"')]],
  ['Release:x IS:resolved', [tag('Release', 'x'), tag('IS', 'resolved')]],
  ['a_b.c-d:1', [tag('a_b.c-d', '1')]],
  ['\u00a0caf\u00e9\u3000\ud83d\ude00', [text('caf\u00e9'), text('\ud83d\ude00')]],
  [Array.from({ length: 20 }, (_, i) => `w${i}`).join(' '), Array.from({ length: 20 }, (_, i) => text(`w${i}`))],
];

const refused: [string, string, string | undefined][] = [
  ['"unclosed', 'the quote is not closed', '"unclosed'],
  ['ok browser:"Mobile Safari', 'the quote is not closed', 'browser:"Mobile Safari'],
  ['browser:', 'browser: needs a value', 'browser:'],
  ['release:"" x', 'release: needs a value', 'release:""'],
  ['""', 'an empty phrase', '""'],
  ['is:open', 'is: takes unresolved, acknowledged or resolved', 'is:open'],
  ['TypeError: boom', 'TypeError: needs a value', 'TypeError:'],
  [':value', 'a filter needs a key before the colon', ':value'],
  ['a/b:c', 'a key is letters, digits', 'a/b:c'],
  [`${'k'.repeat(33)}:v`, 'a key is at most 32 characters', `${'k'.repeat(33)}:v`],
  [`k:${'v'.repeat(201)}`, 'a value is at most 200 characters', 'k:vvvv'],
  ['!word', '! applies to key:value filters only', '!word'],
  ['!"a phrase"', '! applies to key:value filters only', '!"a phrase"'],
  ['! is:resolved', 'a lone !', '!'],
  ['foo"bar', 'a quote must open the term', 'foo"bar'],
  ['k:v"w', 'a quote must open the value', 'k:v"w'],
  ['"a"b', 'a closing quote must end the term', '"a"b'],
  ['k:"a"b c', 'a closing quote must end the term', 'k:"a"b'],
  [Array.from({ length: 21 }, (_, i) => `w${i}`).join(' '), 'at most 20 terms', 'w20'],
  ['x'.repeat(1025), 'the query is 1025 bytes; at most 1024', undefined],
  ['\u00e9'.repeat(513), 'the query is 1026 bytes', undefined],
  ['a\u0000b', 'U+0000', undefined],
  ['a\ud800b', 'lone surrogate', undefined],
];

function refusal(q: string): AppError {
  try {
    parseSearch(q);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error(`${JSON.stringify(q)} parsed`);
}

describe('search queries', () => {
  it.each(parsed)('%j parses', (q, terms) => {
    expect(parseSearch(q)).toEqual(terms);
  });

  it.each(refused)('%j is refused: %s', (q, message, term) => {
    const err = refusal(q);
    expect(err.code).toBe('invalid_request');
    expect(err.message).toContain(message);
    expect(err.message).toMatch(/^q: /);
    expect(err.details).toEqual({
      field: 'query.q',
      ...(term === undefined ? {} : { term: expect.stringContaining(term) }),
    });
    if (term !== undefined) expect(err.message).toContain(`term ${JSON.stringify(err.details!.term)}: `);
  });

  it('prints terms canonically: one space between, quotes only where needed', () => {
    expect(printSearch(parseSearch('  !browser:"Chrome"   "a b"  x:"say \\"hi\\""  "k:v" '))).toBe(
      '!browser:Chrome "a b" x:"say \\"hi\\"" "k:v"',
    );
  });
});

// Characters the language gives a meaning to, often, among any others (lone surrogates and U+0000
// included: they must be refused, never thrown as something else).
const anyChar = fc.oneof(
  fc.constantFrom(' ', '"', '\\', ':', '!', 'a', 'is', 'release', '\t', '\u00a0'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);
const anyQuery = fc.array(anyChar, { maxLength: 60 }).map((parts) => parts.join(''));

const valueText = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).filter((s) => !s.includes('\0'));
const key = fc
  .stringMatching(/^[A-Za-z0-9_.-]{1,32}$/)
  .filter((k) => k !== 'is' && !(searchFilters as readonly string[]).includes(k));
const negated = fc.boolean();
const termArb: fc.Arbitrary<SearchTerm> = fc.oneof(
  valueText.map((t) => text(t)),
  fc.record({
    kind: fc.constant('is' as const),
    state: fc.constantFrom('unresolved', 'acknowledged', 'resolved'),
    negated,
  }),
  fc.record({ kind: fc.constantFrom(...searchFilters), value: valueText, negated }),
  fc.record({ kind: fc.constant('tag' as const), key, value: valueText, negated }),
);

describe('search properties', () => {
  it('throws nothing but invalid_request, whatever the query', () => {
    fc.assert(
      fc.property(anyQuery, (q) => {
        try {
          const terms = parseSearch(q);
          expect(terms.length).toBeLessThanOrEqual(searchLimits.terms);
        } catch (err) {
          expect(err).toBeInstanceOf(AppError);
          expect((err as AppError).code).toBe('invalid_request');
          expect((err as AppError).details).toMatchObject({ field: 'query.q' });
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('parses a printed query back to its terms', () => {
    fc.assert(
      fc.property(fc.array(termArb, { maxLength: searchLimits.terms }), (terms) => {
        fc.pre(Buffer.byteLength(printSearch(terms)) <= searchLimits.queryBytes);
        expect(parseSearch(printSearch(terms))).toEqual(terms);
      }),
      { numRuns: 2000 },
    );
  });

  it('prints what it parsed to a query that parses the same', () => {
    fc.assert(
      fc.property(anyQuery, (q) => {
        let terms: SearchTerm[];
        try {
          terms = parseSearch(q);
        } catch {
          return;
        }
        expect(parseSearch(printSearch(terms))).toEqual(terms);
      }),
      { numRuns: 3000 },
    );
  });
});

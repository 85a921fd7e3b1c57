// dump-check.ts against fixtures: what counts as pg_dump's closing line (with and without the
// \unrestrict line of 15.14+), and the per-table figures of COPY blocks: rows counted, names as
// pg_dump quotes them, a `\.` inside data never ending a block, and a checksum that depends on
// the rows but neither on their order nor on where the stream was split.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyStatsScanner, dumpIncompleteReason } from '../../src/domain/backups/format/dump-check.ts';

const closing = '--\n-- PostgreSQL database dump complete\n--\n\n';

describe('dumpIncompleteReason', () => {
  it.each([
    [
      'pg_dump 15.14+ (\\unrestrict after the closing line)',
      `SET x = 1;\n\n${closing}\\unrestrict abcDEF123\n\n`,
      null,
    ],
    ['pg_dump before 15.14', `SET x = 1;\n\n${closing}`, null],
    ['without the final newlines', 'SET x = 1;\n\n--\n-- PostgreSQL database dump complete\n--', null],
    ['cut before the closing line', 'CREATE TABLE t (id int);\nALTER TABLE ONLY t\n', /closing line/],
    ['cut inside the closing line', 'SET x = 1;\n\n--\n-- PostgreSQL database dump comp', /closing line/],
    ['the \\unrestrict line alone', '\\unrestrict abc\n', 'the dump is empty'],
    ['empty', '', 'the dump is empty'],
    ['blank lines only', '\n\n  \n', 'the dump is empty'],
    ['a statement after the closing line', `${closing}select 1;\n`, /closing line/],
  ])('%s', (_what, tail, expected) => {
    const got = dumpIncompleteReason(tail);
    if (expected === null || typeof expected === 'string') expect(got).toBe(expected);
    else expect(got).toMatch(expected);
  });
});

const header = (name: string, table: string, columns = '(id, v)') =>
  `--\n-- Data for Name: ${name}; Type: TABLE DATA; Schema: public; Owner: -\n--\n\nCOPY ${table} ${columns} FROM stdin;\n`;
const block = (table: string, rows: string[]) =>
  `${header(table, table)}${rows.map((r) => `${r}\n`).join('')}\\.\n\n\n`;

function scan(text: string | Buffer, splits: number[] = []): Record<string, { rows: number; checksum: string }> {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const s = copyStatsScanner();
  let at = 0;
  for (const cut of [...splits].sort((a, b) => a - b)) {
    s.push(bytes.subarray(at, cut));
    at = cut;
  }
  s.push(bytes.subarray(at));
  return s.end();
}

const script = [
  'SET statement_timeout = 0;\n\nCREATE TABLE public.t (id int, v text);\n\n',
  block('public.t', ['1\tone', '2\ttwo with \\\\. inside', '3\t\\N', '4\tcaf\u00e9']),
  block('public."Weird ""Name"" (x)"', ['1\ta']),
  block('billing.empty', []),
  '-- a comment that mentions COPY public.fake (id) FROM stdin;\nCOPY public.not_after_header (id) FROM stdin;\n1\n\\.\n\n',
  closing,
].join('');

describe('copyStatsScanner', () => {
  it('counts the rows of each COPY block, with names as pg_dump quotes them', () => {
    const got = scan(script);
    expect(Object.fromEntries(Object.entries(got).map(([t, f]) => [t, f.rows]))).toEqual({
      'public.t': 4,
      'public."Weird ""Name"" (x)"': 1,
      'billing.empty': 0,
    });
    for (const f of Object.values(got)) expect(f.checksum).toMatch(/^[0-9a-f]{16}$/);
  });

  it('gives the same figures however the stream is split', () => {
    const whole = scan(script);
    const bytes = Buffer.from(script);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: bytes.length }), { maxLength: 40 }), (splits) => {
        expect(scan(bytes, splits)).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });

  it('does not depend on the order of rows, and does on their content', () => {
    const rows = fc.array(
      fc.string({ unit: 'grapheme', minLength: 0, maxLength: 40 }).filter((r) => !r.includes('\n') && r !== '\\.'),
      { minLength: 1, maxLength: 30 },
    );
    fc.assert(
      fc.property(rows, fc.integer({ min: 0, max: 1000 }), (list, seed) => {
        const shuffled = [...list].sort((a, b) => ((a.length * 31 + seed) % 7) - ((b.length * 31 + seed) % 7));
        expect(scan(block('public.t', shuffled))).toEqual(scan(block('public.t', list)));
        const changed = [...list];
        changed[seed % changed.length] = `${changed[seed % changed.length]}x`;
        expect(scan(block('public.t', changed))['public.t']!.checksum).not.toBe(
          scan(block('public.t', list))['public.t']!.checksum,
        );
      }),
      { numRuns: 200 },
    );
  });

  it("keeps only a long header line's start, and still finds the table", () => {
    const columns = `(${Array.from({ length: 400 }, (_, i) => `column_number_${i}`).join(', ')})`;
    const text = `${header('wide', 'public.wide', columns)}1\n2\n\\.\n\n`;
    expect(scan(text)).toMatchObject({ 'public.wide': { rows: 2 } });
  });
});

// The filter that leaves out pg_dump's own BEGIN/COMMIT around large objects (blobs-filter.ts),
// on text as pg_dump 15 prints it (and 17's per-group names), cut into chunks at every possible
// place; COPY rows that spell pg_dump's header line by line pass through untouched.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { blobsTransactionFilter } from '../../src/domain/backups/format/blobs-filter.ts';

const note = ' -- left out by Cairn: the restore is one transaction';
const blobs = (name: string, oid: number, begin = 'BEGIN;', commit = 'COMMIT;') => `--
-- Data for Name: ${name}; Type: BLOBS; Schema: -; Owner: -
--

${begin}

SELECT pg_catalog.lo_open('${oid}', 131072);
SELECT pg_catalog.lowrite(0, '\\x68656c6c6f');
SELECT pg_catalog.lo_close(0);

${commit}
`;
const left = (name: string, oid: number) => blobs(name, oid, `-- BEGIN;${note}`, `-- COMMIT;${note}`);

// COPY data whose rows are pg_dump's header, its BEGIN and a COMMIT, line for line: a one-column
// table prints them as real lines (only newlines inside a value are escaped).
const copyBlock = (table: string) => `--
-- Data for Name: ${table}; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.${table} (v) FROM stdin;
--
-- Data for Name: BLOBS; Type: BLOBS; Schema: -; Owner: -
--

BEGIN;
COMMIT;
\\\\.
-- Data for Name: BLOBS; Type: BLOBS;\\n--\\n\\nBEGIN;
\\.


`;
const before = `--
-- Name: t; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.t (v text);


${copyBlock('t')}`;
const after = `
--
-- Name: t t_v; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX t_v ON public.t USING btree (v);

`;
// pg_dump 15 prints one entry named BLOBS; 17 one per group, named by its OID or OID range.
const dump = `${before}${blobs('BLOBS', 16401)}\n${copyBlock('u')}${blobs('16402..16403', 16402)}\n${blobs('16404', 16404)}${after}\nCOMMIT;\n`;
const expected = `${before}${left('BLOBS', 16401)}\n${copyBlock('u')}${left('16402..16403', 16402)}\n${left('16404', 16404)}${after}\nCOMMIT;\n`;

function run(text: string, cuts: number[]): string {
  const f = blobsTransactionFilter();
  const bytes = Buffer.from(text);
  const out: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    out.push(...f.push(bytes.subarray(from, cut)));
    from = cut;
  }
  out.push(...f.end());
  return Buffer.concat(out).toString();
}

describe('blobsTransactionFilter', () => {
  it('leaves out exactly the BEGIN and COMMIT of each large-object entry, and nothing in COPY data', () => {
    expect(run(dump, [])).toBe(expected);
    // The caller's own COMMIT at the very end survives.
    expect(run(dump, []).endsWith('\n\nCOMMIT;\n')).toBe(true);
  });

  it('gives the same output wherever the stream is cut in two', () => {
    for (let cut = 0; cut <= dump.length; cut++) expect(run(dump, [cut])).toBe(expected);
  });

  it('gives the same output in chunks of every size', () => {
    for (let size = 1; size <= 600; size++) {
      const cuts = Array.from({ length: Math.floor(dump.length / size) }, (_, i) => (i + 1) * size);
      expect(run(dump, cuts)).toBe(expected);
    }
  });

  it('gives the same output for any chunking', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: dump.length }), { maxLength: 40 }), (cuts) => {
        expect(
          run(
            dump,
            cuts.sort((a, b) => a - b),
          ),
        ).toBe(expected);
      }),
    );
  });

  it('passes through a dump without large objects, a header without its BEGIN and names pg_dump never prints', () => {
    const plain = `${before}${after}COMMIT;\n`;
    expect(run(plain, [7, 100])).toBe(plain);
    const noBegin = `${before}--\n-- Data for Name: BLOBS; Type: BLOBS; Schema: -; Owner: -\n--\n\nSELECT 1;\nCOMMIT;\n`;
    expect(run(noBegin, [50])).toBe(noBegin);
    for (const name of ['blobs', 'x BLOBS', '1..', '12345678901', 'BLOBS; Type: BLOBS']) {
      const odd = `${before}${blobs(name, 1)}COMMIT;\n`;
      expect(run(odd, [])).toBe(odd);
    }
  });

  it("ends with a failing statement when a BEGIN it left out never got its COMMIT, rather than take the caller's quietly", () => {
    const raise =
      /\nDO \$cairn\$ BEGIN RAISE EXCEPTION 'cairn: the dump''s large-object section has no COMMIT of its own; nothing was committed'; END \$cairn\$;\n$/;
    const cut = `${before}${blobs('BLOBS', 1).replace('COMMIT;\n', '')}`;
    expect(run(cut, [])).toMatch(raise);
    expect(run(`${cut}\nCOMMIT;\n`, [100])).toMatch(raise);
    expect(run(dump, [100])).not.toMatch(/RAISE/);
  });
});

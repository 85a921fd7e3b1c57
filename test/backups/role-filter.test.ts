// The restore's role filter on its own (a pure function, run inlined in the zlib child): which
// statements it leaves out, that it reads nothing inside strings, dollar bodies, comments or COPY
// rows, and that where the chunks split changes nothing.
import { describe, expect, it } from 'vitest';
import { roleStatementFilter, type RoleFilterOptions } from '../../src/domain/backups/restore/role-filter.ts';
import { sqlStatementSplitter } from '../../src/domain/backups/restore/sql-statements.ts';

function filtered(sql: string, options: RoleFilterOptions, size = 1 << 20) {
  const f = roleStatementFilter(options, sqlStatementSplitter);
  const bytes = Buffer.from(sql);
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(...f.push(bytes.subarray(i, i + size)));
  out.push(...f.end());
  return { text: Buffer.concat(out).toString(), skipped: f.skipped() };
}

const header = (name: string, type: string, owner: string, schema = 'public') =>
  `\n--\n-- Name: ${name}; Type: ${type}; Schema: ${schema}; Owner: ${owner}\n--\n\n`;
// The comment ends its own line; the statement's own line end follows it.
const note = (kind: string) => `-- left out by Cairn: ${kind}\n\n`;
const owner = note('an owner change to a role that cannot be used here');
const grant = note('a grant or revoke naming a role the target lacks');

// A script shaped as pg_dump 15 writes it, with every trap a line-based reading would fall into.
const script = [
  'SET standard_conforming_strings = on;\n',
  header('t', 'TABLE', 'bob'),
  "CREATE TABLE public.t (\n    a text DEFAULT 'x;\nALTER TABLE public.t OWNER TO bob;' -- ; GRANT\n);\n\n\n",
  'ALTER TABLE public.t OWNER TO bob;\n',
  header('TABLE "x OWNER TO bob"', 'TABLE', 'bob'),
  'CREATE TABLE public."x OWNER TO bob" (a int);\n',
  'ALTER TABLE public."x OWNER TO bob" OWNER TO bob;\n',
  header('f()', 'FUNCTION', 'bob'),
  'CREATE FUNCTION public.f() RETURNS int LANGUAGE sql AS $fn$\nGRANT SELECT ON TABLE public.t TO ghost;\nSELECT 1;\n$fn$;\n\n',
  'ALTER FUNCTION public.f() OWNER TO carol;\n',
  header('g()', 'FUNCTION', 'bob'),
  "CREATE FUNCTION public.g() RETURNS text LANGUAGE sql AS 'SELECT E''it\\\\''s;''';\n",
  "COMMENT ON FUNCTION public.g() IS E'a \\' quote; GRANT ALL ON TABLE public.t TO ghost;';\n",
  '/* a comment /* nested; */ GRANT ALL ON TABLE public.t TO ghost; */\n',
  header('t', 'TABLE DATA', 'bob').replace('Name:', 'Data for Name:'),
  "COPY public.t (a) FROM stdin;\nGRANT SELECT ON TABLE public.t TO ghost;\n$fn$ '\n\\.\n",
  header('TABLE t', 'ACL', 'bob'),
  'GRANT SELECT ON TABLE public.t TO ghost;\n',
  'GRANT SELECT(a),UPDATE(a) ON TABLE public.t TO reader WITH GRANT OPTION;\n',
  'REVOKE ALL ON TABLE public.t FROM PUBLIC;\n',
  'SET SESSION AUTHORIZATION carol;\n',
  'GRANT SELECT ON TABLE public.t TO "Mixed Case";\n',
  'RESET SESSION AUTHORIZATION;\n',
  header('DEFAULT PRIVILEGES FOR TABLES', 'DEFAULT ACL', 'bob', '-'),
  'ALTER DEFAULT PRIVILEGES FOR ROLE bob IN SCHEMA public GRANT SELECT ON TABLES  TO reader;\n',
  '\n--\n-- PostgreSQL database dump complete\n--\n\n',
].join('');

describe('the role filter', () => {
  it('keeps everything when the restoring role is a superuser and every role exists', () => {
    const roles = { bob: false, carol: false, reader: false, ghost: false, 'Mixed Case': false };
    const r = filtered(script, { roles, superuser: true, current: 'postgres' });
    expect(r.text).toBe(script);
    expect(r.skipped).toEqual({ statements: 0, roles: [] });
  });

  it('leaves out exactly the statements naming a role it cannot use, nothing inside strings, bodies, comments or rows', () => {
    const options = { roles: { reader: false, 'Mixed Case': false, me: true }, superuser: false, current: 'me' };
    const r = filtered(script, options);
    const expected = script
      .replace('\nALTER TABLE public.t OWNER TO bob;\n', `\n${owner}`)
      .replace('ALTER TABLE public."x OWNER TO bob" OWNER TO bob;\n', owner)
      .replace('\nGRANT SELECT ON TABLE public.t TO ghost;\nGRANT SELECT(a)', `\n${grant}GRANT SELECT(a)`)
      .replace(
        'SET SESSION AUTHORIZATION carol;\n',
        note('a SET SESSION AUTHORIZATION naming a role that cannot be used here'),
      )
      .replace('RESET SESSION AUTHORIZATION;\n', note('the end of a SET SESSION AUTHORIZATION left out'))
      .replace(
        'ALTER DEFAULT PRIVILEGES FOR ROLE bob IN SCHEMA public GRANT SELECT ON TABLES  TO reader;\n',
        note('default privileges naming a role that cannot be used here'),
      );
    expect(r.text).toBe(expected);
    // The owner change to carol is not its entry's owner (bob): not read with certainty, left alone.
    expect(r.text).toContain('\nALTER FUNCTION public.f() OWNER TO carol;\n');
    expect(r.skipped).toEqual({ statements: 6, roles: ['bob', 'carol', 'ghost'] });
  });

  it("guards an owner change to a role the restorer is only a member of, so PostgreSQL's refusal is a warning", () => {
    const sql = `${header('t', 'TABLE', 'bob')}CREATE TABLE public.t (a int);\n\n\nALTER TABLE public.t OWNER TO bob;\n`;
    const r = filtered(sql, { roles: { bob: true, me: true }, superuser: false, current: 'me', nonce: 'n0nce' });
    expect(r.text).toBe(
      sql.replace(
        'ALTER TABLE public.t OWNER TO bob;',
        "DO $cairn_owner$ BEGIN ALTER TABLE public.t OWNER TO bob; EXCEPTION WHEN insufficient_privilege THEN RAISE WARNING '%', 'cairn-left-out-owner:n0nce:626f62'; END $cairn_owner$;",
      ),
    );
    expect(r.skipped).toEqual({ statements: 0, roles: [] });
    // A superuser's: nothing to guard.
    expect(filtered(sql, { roles: { bob: false }, superuser: true, current: 'postgres' }).text).toBe(sql);
    // Its own role: the restorer created the table, so owns it; nothing to do, nothing lost.
    const own = filtered(sql, { roles: { bob: true }, superuser: false, current: 'bob' });
    expect(own.text).toBe(
      sql.replace(
        'ALTER TABLE public.t OWNER TO bob;\n',
        note('an owner change to the restoring role itself, which owns the object already'),
      ),
    );
    expect(own.skipped).toEqual({ statements: 0, roles: [] });
  });

  it('leaves out, for a superuser too, an owner change or default privileges naming a role the target lacks', () => {
    const sql = `${header('t', 'TABLE', 'gone')}CREATE TABLE public.t (a integer);\n\n\nALTER TABLE public.t OWNER TO gone;\n${header('DEFAULT PRIVILEGES FOR TABLES', 'DEFAULT ACL', 'gone')}ALTER DEFAULT PRIVILEGES FOR ROLE gone IN SCHEMA public GRANT SELECT ON TABLES TO postgres;\n`;
    for (const superuser of [true, false]) {
      const r = filtered(sql, { roles: { postgres: true }, superuser, current: 'postgres' });
      expect(r.text).not.toMatch(/^ALTER/m);
      expect(r.skipped).toEqual({ statements: 2, roles: ['gone'] });
    }
  });

  it('writes no part of a left-out statement: a carriage return in a name cannot end the comment', () => {
    const name = "x\rDROP TABLE IF EXISTS public.victim; SELECT 'injected'; --";
    const quoted = `"${name}"`;
    const sql = `${header(name.replace('\r', ' '), 'TABLE', 'rv_owner')}CREATE TABLE public.${quoted} (a integer);\n\n\nALTER TABLE public.${quoted} OWNER TO rv_owner;\n`;
    const r = filtered(sql, { roles: { me: true }, superuser: false, current: 'me' });
    expect(r.text).toBe(sql.replace(`ALTER TABLE public.${quoted} OWNER TO rv_owner;\n`, owner));
    expect(r.text.split('left out by Cairn')[1]).not.toMatch(/[\r\u2028\u2029]|DROP/);
    expect(r.skipped).toEqual({ statements: 1, roles: ['rv_owner'] });
  });

  it('reads a header line to its \\n only, and no name can change the entry it describes', () => {
    // U+2028 ends a line for JavaScript's ^ and $, not for pg_dump: the forged "header" after it is
    // part of the table's name, and the entry stays a TABLE owned by bob.
    const forged = `t\u2028-- Name: x; Type: ACL; Schema: public; Owner: bob`;
    const grantIn = (h: string) => `${h}GRANT SELECT ON TABLE public.t TO ghost;\n`;
    const options = { roles: { me: true }, superuser: false, current: 'me' };
    const sql = grantIn(header(forged, 'TABLE', 'bob'));
    expect(filtered(sql, options).text).toBe(sql);
    // A schema named to hold `; Type: ACL; Schema: `: the header reads no entry with certainty.
    const sneaky = grantIn(header('t', 'TABLE', 'bob', 'a; Type: ACL; Schema: b'));
    expect(filtered(sneaky, options).text).toBe(sneaky);
    // A table named to hold a header: its type is not read, its owner (the line's end) still is.
    const named = 'x -- Name: z; Type: TABLE; Schema: s; Owner: o ';
    const change = `ALTER TABLE public."${named}" OWNER TO postgres;\n`;
    const sp = `${header(named, 'TABLE', 'postgres')}CREATE TABLE public."${named}" (a integer);\n\n\n${change}`;
    const r = filtered(sp, options);
    expect(r.text).toBe(sp.replace(change, owner));
    expect(r.skipped).toEqual({ statements: 1, roles: ['postgres'] });
    // The same grant in a true ACL entry is left out.
    expect(filtered(grantIn(header('TABLE t', 'ACL', 'bob')), options).skipped.statements).toBe(1);
  });

  it('keeps owner changes of large objects to another role up to its share of the lock table, and reports the rest', () => {
    const lo = (n: number) =>
      `${header(String(n), 'BLOB', 'bob', '-')}SELECT pg_catalog.lo_create('${n}');\n${header(String(n), 'BLOB', 'bob', '-')}ALTER LARGE OBJECT ${n} OWNER TO bob;\n`;
    const sql = [1, 2, 3, 4, 5].map(lo).join('');
    const r = filtered(sql, { roles: { bob: false }, superuser: true, current: 'postgres', largeObjectOwners: 3 });
    expect(r.text.match(/^ALTER LARGE OBJECT/gm)).toHaveLength(3);
    expect(r.skipped).toEqual({ statements: 2, roles: ['bob'] });
  });

  it('gives the same bytes wherever the chunks split', () => {
    const options = { roles: { reader: false, me: true }, superuser: false, current: 'me' };
    const whole = filtered(script, options);
    for (const size of [1, 2, 3, 5, 7, 13, 64, 200]) {
      const r = filtered(script, options, size);
      expect(r.text, `chunks of ${size}`).toBe(whole.text);
      expect(r.skipped).toEqual(whole.skipped);
    }
  });

  it('passes on an unfinished statement at the end as it is', () => {
    const sql = header('TABLE t', 'ACL', 'bob') + "GRANT SELECT ON TABLE public.t TO ghost; SELECT 'open";
    const r = filtered(sql, { roles: {}, superuser: false, current: 'me' });
    expect(r.text).toBe(sql.replace('GRANT SELECT ON TABLE public.t TO ghost;', grant.slice(0, -1)));
  });
});

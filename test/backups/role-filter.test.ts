// The restore's role filter on its own (a pure function, run inlined in the zlib child): which
// statements it leaves out, that it reads nothing inside strings, dollar bodies, comments or COPY
// rows, and that where the chunks split changes nothing.
import { describe, expect, it } from 'vitest';
import { roleStatementFilter, type RoleFilterOptions } from '../../src/domain/backups/role-filter.ts';
import { sqlStatementSplitter } from '../../src/domain/backups/sql-statements.ts';

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
const note = (roles: string) => ` -- left out by Cairn: role ${roles} cannot be used here\n`;

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
      .replace('\nALTER TABLE public.t OWNER TO bob;\n', `\n-- ALTER TABLE public.t OWNER TO bob;${note('bob')}\n`)
      .replace(
        'ALTER TABLE public."x OWNER TO bob" OWNER TO bob;\n',
        `-- ALTER TABLE public."x OWNER TO bob" OWNER TO bob;${note('bob')}\n`,
      )
      .replace(
        '\nGRANT SELECT ON TABLE public.t TO ghost;\nGRANT SELECT(a)',
        `\n-- GRANT SELECT ON TABLE public.t TO ghost;${note('ghost')}\nGRANT SELECT(a)`,
      )
      .replace('SET SESSION AUTHORIZATION carol;\n', `-- SET SESSION AUTHORIZATION carol;${note('carol')}\n`)
      .replace(
        'RESET SESSION AUTHORIZATION;\n',
        '-- RESET SESSION AUTHORIZATION; -- left out by Cairn: it ends a SET SESSION AUTHORIZATION left out\n\n',
      )
      .replace(
        'ALTER DEFAULT PRIVILEGES FOR ROLE bob IN SCHEMA public GRANT SELECT ON TABLES  TO reader;\n',
        `-- ALTER DEFAULT PRIVILEGES FOR ROLE bob IN SCHEMA public GRANT SELECT ON TABLES  TO reader;${note('bob')}\n`,
      );
    expect(r.text).toBe(expected);
    // The owner change to carol is not its entry's owner (bob): not read with certainty, left alone.
    expect(r.text).toContain('\nALTER FUNCTION public.f() OWNER TO carol;\n');
    expect(r.skipped).toEqual({ statements: 6, roles: ['bob', 'carol', 'ghost'] });
  });

  it("guards an owner change to a role the restorer is only a member of, so PostgreSQL's refusal is a warning", () => {
    const sql = `${header('t', 'TABLE', 'bob')}CREATE TABLE public.t (a int);\n\n\nALTER TABLE public.t OWNER TO bob;\n`;
    const r = filtered(sql, { roles: { bob: true, me: true }, superuser: false, current: 'me' });
    expect(r.text).toBe(
      sql.replace(
        'ALTER TABLE public.t OWNER TO bob;',
        "DO $cairn_owner$ BEGIN ALTER TABLE public.t OWNER TO bob; EXCEPTION WHEN insufficient_privilege THEN RAISE WARNING '%', 'cairn-left-out-owner:' || 'bob'; END $cairn_owner$;",
      ),
    );
    expect(r.skipped).toEqual({ statements: 0, roles: [] });
    // Its own role, or a superuser's: nothing to guard.
    expect(filtered(sql, { roles: { bob: true }, superuser: false, current: 'bob' }).text).toBe(sql);
    expect(filtered(sql, { roles: { bob: false }, superuser: true, current: 'postgres' }).text).toBe(sql);
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
    expect(r.text).toBe(sql.replace('GRANT', '-- GRANT').replace('ghost;', `ghost;${note('ghost')}`));
  });
});

// Sample databases for the catalog tests: three public ones (fixtures/README.md) and one of our
// own with what they lack (roles, grants, default privileges, a comment on public, an extension,
// partitions, a policy, a rule), and a check of the catalog that does not use Cairn's own: the
// whole schema as pg_dump prints it, and the privileges a role really has.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { findTool } from '../../src/domain/backups/pgtools.ts';

const fixture = (name: string): string =>
  gunzipSync(readFileSync(new URL(`./fixtures/${name}`, import.meta.url))).toString('utf8');

/** Pagila's rows are not vendored (fixtures/README.md): a modest set in every table, payment's partitions included. */
const pagilaRows = `
set search_path = public;
insert into language (name) select 'Language ' || g from generate_series(1, 3) g;
insert into actor (first_name, last_name) select 'First' || g, 'Last' || g from generate_series(1, 200) g;
insert into category (name) select 'Category ' || g from generate_series(1, 16) g;
insert into film (title, description, release_year, language_id, length, rating, special_features)
  select 'Film ' || g, 'A film about ' || md5(g::text), 2000 + g % 20, 1 + g % 3, 60 + g % 120,
         (enum_range(null::mpaa_rating))[1 + g % 5], array['Trailers', 'Commentaries']
  from generate_series(1, 300) g;
insert into film_actor select 1 + g % 200, 1 + g % 300 from generate_series(1, 900) g on conflict do nothing;
insert into film_category select g, 1 + g % 16 from generate_series(1, 300) g;
insert into country (country) select 'Country ' || g from generate_series(1, 20) g;
insert into city (city, country_id) select 'City ' || g, 1 + g % 20 from generate_series(1, 100) g;
insert into address (address, district, city_id, phone)
  select g || ' Main Street', 'District ' || g % 7, 1 + g % 100, '555-' || g from generate_series(1, 200) g;
insert into store (manager_staff_id, address_id) values (1, 1), (2, 2);
insert into staff (first_name, last_name, address_id, store_id, username, picture)
  values ('Mike', 'Hillyer', 3, 1, 'mike', '\\x89504e47'), ('Jon', 'Stephens', 4, 2, 'jon', null);
insert into customer (store_id, first_name, last_name, email, address_id, active)
  select 1 + g % 2, 'Customer' || g, 'Name' || g, 'c' || g || '@example.org', 5 + g % 195, 1 from generate_series(1, 500) g;
insert into inventory (film_id, store_id) select 1 + g % 300, 1 + g % 2 from generate_series(1, 1000) g;
insert into rental (rental_date, inventory_id, customer_id, return_date, staff_id)
  select timestamptz '2022-01-01' + g * interval '73 minutes', 1 + g % 1000, 1 + g % 500,
         timestamptz '2022-01-03' + g * interval '73 minutes', 1 + g % 2
  from generate_series(1, 2000) g;
insert into payment (customer_id, staff_id, rental_id, amount, payment_date)
  select 1 + g % 500, 1 + g % 2, g, (g % 11) + 0.99, timestamptz '2022-01-01' + g * interval '79 minutes'
  from generate_series(1, 2000) g;
refresh materialized view rental_by_category;
`;

/** The three public samples, as SQL a fresh database runs. */
export function publicSamples(): Record<string, string> {
  return {
    pagila: fixture('pagila-schema.sql.gz') + pagilaRows,
    // The script makes its own database and connects to it (psql's \c): the test gives it one.
    chinook: fixture('chinook.sql.gz').replace(
      /^(DROP DATABASE IF EXISTS chinook;|CREATE DATABASE chinook;|\\c chinook;)$/gm,
      '',
    ),
    northwind: fixture('northwind.sql.gz'),
  };
}

export interface Extras {
  reader: string;
  writer: string;
  /** citext, from Debian's postgresql-15 contrib, where pg_available_extensions lists it. */
  citext: boolean;
}

/** What the samples lack. `reader` logs in; `writer` owns a schema and its tables. */
export function extrasSql({ reader, writer, citext }: Extras): string {
  return `
comment on schema public is 'the shop''s own schema';
${citext ? 'create extension citext;' : ''}
create type status as enum ('new', 'paid', 'void');
create domain cents as bigint not null default 0 check (value >= 0);
create schema ledger authorization ${writer};
create table ledger.entries (id bigint generated always as identity, status status not null default 'new',
  amount cents, email ${citext ? 'citext' : 'text'}, at timestamptz not null, primary key (id, at)) partition by range (at);
create table ledger.entries_2026 partition of ledger.entries for values from ('2026-01-01') to ('2027-01-01');
create table ledger.entries_rest partition of ledger.entries default;
create function ledger.stamp() returns trigger language plpgsql as $$
begin new.email := lower(new.email); return new; end $$;
create trigger entries_stamp before insert on ledger.entries_2026 for each row execute function ledger.stamp();
insert into ledger.entries (status, amount, email, at)
  select (enum_range(null::status))[1 + g % 3], g * 100, 'User' || g || '@Example.org', timestamptz '2025-12-01' + g * interval '1 day'
  from generate_series(1, 400) g;
create materialized view ledger.totals as select status, sum(amount) as total, count(*) as n from ledger.entries group by status;
create unique index totals_status on ledger.totals (status);
alter table ledger.entries owner to ${writer};
alter table ledger.entries_2026 owner to ${writer};
alter table ledger.entries_rest owner to ${writer};
alter materialized view ledger.totals owner to ${writer};
comment on table ledger.entries is 'money in and out';
comment on column ledger.entries.amount is 'in cents';
grant usage on schema ledger to ${reader};
grant select on ledger.entries, ledger.entries_2026, ledger.entries_rest, ledger.totals to ${reader};
alter default privileges for role ${writer} in schema ledger grant select on tables to ${reader};
alter default privileges for role ${writer} revoke execute on functions from public;
create table public.drafts (id int primary key);
alter table public.drafts owner to ${writer};
create table public.notes (id int primary key, body text, secret text);
insert into public.notes select g, 'note ' || g, md5(g::text) from generate_series(1, 50) g;
grant select (id, body) on public.notes to ${reader};
alter table public.notes enable row level security;
create policy notes_visible on public.notes for select to ${reader} using (id <= 40);
create rule notes_keep as on delete to public.notes do instead nothing;
create view public.note_titles with (security_barrier) as select id, body from public.notes;
grant select on public.note_titles to ${reader};
create sequence public.tickets start 100 increment 5;
select nextval('public.tickets'), nextval('public.tickets');
revoke execute on function ledger.stamp() from public;
`;
}

/**
 * The database's whole schema as pg_dump prints it (owners, grants, comments, default privileges
 * and all), without the random key of the \\restrict lines (pg_dump 15.14+).
 */
export async function schemaText(url: string): Promise<string> {
  const { stdout } = await promisify(execFile)((await findTool('pg_dump')).path, ['--schema-only', `--dbname=${url}`], {
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout.replace(/^\\(un)?restrict .*$/gm, '');
}

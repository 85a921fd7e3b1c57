// Helpers for backup tests: application databases on the local server, the sealed URL an
// operator would set, per-table checksums, and polling with a deadline (no sleeps).
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import pg from 'pg';
import type { Config } from '../../src/config.ts';
import { keyringFromConfig, seal } from '../../src/crypto.ts';
import { databaseUrl, withAdmin } from '../support/pg.ts';
import { eventually } from '../support/probes.ts';

export interface AppDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export async function createAppDatabase(seedSql: string): Promise<AppDatabase> {
  const name = `cairn_app_${randomBytes(5).toString('hex')}`;
  await withAdmin((c) => c.query(`create database ${name}`));
  const url = databaseUrl(name);
  await query(url, seedSql);
  return {
    name,
    url,
    drop: () => withAdmin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}

export async function query<T extends pg.QueryResultRow = pg.QueryResultRow>(
  url: string,
  sql: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** What `cairn admin env set-database` stores: the URL sealed to the environment. */
export async function setEnvDatabase(db: Knex, config: Config, envId: string, url: string): Promise<void> {
  await db('envs')
    .where({ id: envId })
    .update({ database_url_enc: seal(keyringFromConfig(config), url, `env-database:${envId}`) });
}

/** md5 of every user table's rows in a stable order, keyed by schema.table. */
export async function tableChecksums(url: string): Promise<Record<string, string>> {
  const tables = await query<{ t: string }>(
    url,
    `select format('%I.%I', schemaname, tablename) as t from pg_tables
    where schemaname not in ('pg_catalog', 'information_schema') order by 1`,
  );
  const out: Record<string, string> = {};
  for (const { t } of tables) {
    const [row] = await query<{ sum: string }>(
      url,
      `select md5(coalesce(string_agg(x::text, E'\\n' order by x::text), '')) as sum from ${t} x`,
    );
    out[t] = row!.sum;
  }
  return out;
}

/** `eventually` (support/probes.ts) named for its failure message: what the test waited for. */
export const waitFor = <T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000) =>
  eventually(probe, { what: `waiting for ${what}`, timeoutMs }) as Promise<T>;

export const seedSource = `
create table customers (id bigserial primary key, email text not null unique, name text, created timestamptz default now(), tags text[], profile jsonb);
create table orders (id bigserial primary key, customer_id bigint references customers(id), total numeric(12,2), note text, paid boolean default false);
create index orders_customer on orders (customer_id);
create view big_orders as select * from orders where total > 100;
create schema billing;
create table billing.invoices (id int primary key, body bytea, issued date);
insert into customers (email, name, tags, profile)
  select 'user' || g || '@example.com', 'User ' || g || E' with \\t tab and ''quote''', array['a', 'b' || g], jsonb_build_object('n', g, 'k', md5(g::text))
  from generate_series(1, 2000) g;
insert into orders (customer_id, total, note, paid)
  select 1 + (g % 2000), (g * 7 % 1000) / 3.0, repeat(md5(g::text), 3), g % 3 = 0 from generate_series(1, 6000) g;
insert into billing.invoices select g, decode(md5(g::text), 'hex'), date '2026-01-01' + g from generate_series(1, 500) g;
select setval('orders_id_seq', 99999);
`;

export { idleJobs } from '../support/jobs.ts';

// SQL of an environment database's set-up: what a new URL's role may do (check.ts), and the
// sample database a newcomer backs up first (demo.ts).
import type pg from 'pg';

export interface RoleAbilities {
  role: string;
  database: string;
  /** CREATEDB or superuser: what a restore drill needs for its scratch database. */
  createdb: boolean;
  server_version: string;
}

export async function roleAbilities(client: pg.Client): Promise<RoleAbilities> {
  const { rows } = await client.query<RoleAbilities>(
    `select current_user as role, current_database() as database, current_setting('server_version') as server_version,
            coalesce((select rolcreatedb or rolsuper from pg_roles where rolname = current_user), false) as createdb`,
  );
  return rows[0]!;
}

export async function databaseExists(client: pg.Client, name: string): Promise<boolean> {
  return (await client.query('select 1 from pg_database where datname = $1', [name])).rows.length > 0;
}

export async function createDatabase(client: pg.Client, name: string): Promise<void> {
  await client.query(`create database "${name}"`);
}

export async function dropDatabase(client: pg.Client, name: string): Promise<void> {
  await client.query(`drop database if exists "${name}" with (force)`);
}

/** A small shop: customers, products, orders and their lines, with keys, a view and a sequence. */
export const demoSeed = `
create table customers (id serial primary key, email text not null unique, name text not null, joined date not null);
create table products (id serial primary key, sku text not null unique, title text not null, price_cents int not null check (price_cents >= 0));
create table orders (id serial primary key, customer_id int not null references customers (id), placed timestamptz not null, status text not null);
create table order_lines (order_id int not null references orders (id), product_id int not null references products (id), quantity int not null, primary key (order_id, product_id));
create view order_totals as
  select o.id, o.customer_id, sum(l.quantity * p.price_cents) as total_cents
    from orders o join order_lines l on l.order_id = o.id join products p on p.id = l.product_id group by o.id;
insert into customers (email, name, joined)
  select 'customer' || g || '@example.com', 'Customer ' || g, date '2026-01-01' + g from generate_series(1, 20) g;
insert into products (sku, title, price_cents)
  select 'SKU-' || lpad(g::text, 3, '0'), 'Product ' || g, 199 * g from generate_series(1, 8) g;
insert into orders (customer_id, placed, status)
  select 1 + g % 20, timestamptz '2026-03-01 09:00Z' + g * interval '7 hours', (array['paid', 'shipped', 'refunded'])[1 + g % 3]
    from generate_series(1, 50) g;
insert into order_lines (order_id, product_id, quantity)
  select o, 1 + (o * 3 + k) % 8, 1 + k from generate_series(1, 50) o, generate_series(0, 1) k;
`;

export async function seedDemo(client: pg.Client): Promise<void> {
  await client.query(demoSeed);
}

/** Rows per table of the sample, as the command reports them. */
export async function demoCounts(client: pg.Client): Promise<Record<string, number>> {
  const { rows } = await client.query<{ t: string; n: number }>(
    `select 'customers' as t, count(*)::int as n from customers union all select 'products', count(*)::int from products
     union all select 'orders', count(*)::int from orders union all select 'order_lines', count(*)::int from order_lines`,
  );
  return Object.fromEntries(rows.map((r) => [r.t, r.n]));
}

// Test databases: one migrated template per version of the schema and job registry, and a fresh
// database per test file cloned from it (CREATE DATABASE … TEMPLATE takes ~100 ms).
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';
import type { Knex } from 'knex';
import pg from 'pg';

export const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function databaseUrl(name: string, base: string = adminUrl): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>, base: string = adminUrl): Promise<T> {
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Changes to migrations or the job registry make a new template: the queue runtime (src/jobs/),
 * the registry (src/queues.ts) and every feature's queue declarations (`queues.ts`).
 */
export function schemaFingerprint(): string {
  const hash = createHash('sha256');
  const dir = new URL('../../migrations/', import.meta.url);
  for (const file of readdirSync(dir).sort()) hash.update(file).update(readFileSync(new URL(file, dir)));
  const src = new URL('../../src/', import.meta.url);
  const registry = readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.startsWith('jobs/') || file === 'queues.ts' || file.endsWith('/queues.ts'))
    .filter((file) => file.endsWith('.ts'))
    .sort();
  for (const file of registry) hash.update(file).update(readFileSync(new URL(file, src)));
  return hash.digest('hex').slice(0, 12);
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export async function cloneDatabase(template: string, base: string = adminUrl): Promise<TestDatabase> {
  const name = `cairn_t_${randomBytes(6).toString('hex')}`;
  await withAdmin(async (c) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await c.query(`create database ${name} template ${template}`);
        return;
      } catch (err) {
        // 55006: the template is briefly in use by a concurrent clone; try again.
        if ((err as { code?: string }).code !== '55006' || attempt > 50) throw err;
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
      }
    }
  }, base);
  return {
    name,
    url: databaseUrl(name, base),
    drop: () => withAdmin((c) => c.query(`drop database if exists ${name} with (force)`), base).then(() => undefined),
  };
}

/**
 * Every row of every table in every schema of the database (pg-boss's included) as text, one row a
 * line: what a leaked dump or backup of it would show. bytea prints as \x… hex; a bytea value that
 * is a raw deflate stream (stored event bodies) is added inflated too, so that compression can never
 * hide a secret from the tests that look for one.
 */
export async function dumpDatabase(db: Knex): Promise<{ schemas: Set<string>; text: string }> {
  const { rows: tables } = await db.raw<{ rows: { schemaname: string; tablename: string }[] }>(
    "select schemaname, tablename from pg_tables where schemaname not in ('pg_catalog', 'information_schema') order by 1, 2",
  );
  const { rows: byteaColumns } = await db.raw<{
    rows: { table_schema: string; table_name: string; column_name: string }[];
  }>(
    "select table_schema, table_name, column_name from information_schema.columns where data_type = 'bytea' and table_schema not in ('pg_catalog', 'information_schema')",
  );
  let text = '';
  for (const t of tables) {
    const { rows } = await db.raw<{ rows: { r: string }[] }>(
      `select t::text as r from "${t.schemaname}"."${t.tablename}" t`,
    );
    for (const r of rows) text += `${t.schemaname}.${t.tablename} ${r.r}\n`;
    for (const c of byteaColumns.filter((b) => b.table_schema === t.schemaname && b.table_name === t.tablename)) {
      const { rows: values } = await db.raw<{ rows: { v: Buffer | null }[] }>(
        `select "${c.column_name}" as v from "${t.schemaname}"."${t.tablename}"`,
      );
      for (const { v } of values) {
        if (!v) continue;
        let inflated: string;
        try {
          inflated = inflateRawSync(v).toString('utf8');
        } catch {
          continue; // not a deflate stream (a hash, a sealed value)
        }
        text += `${t.schemaname}.${t.tablename}.${c.column_name} (inflated) ${inflated}\n`;
      }
    }
  }
  return { schemas: new Set(tables.map((t) => t.schemaname)), text };
}

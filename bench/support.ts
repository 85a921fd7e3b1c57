// Shared bench helpers: a scratch database on the configured Postgres, and timing.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig, type Config } from '../src/config.ts';

export const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export async function scratchDatabase(): Promise<{ config: Config; drop(): Promise<void> }> {
  const name = `cairn_bench_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const config = loadConfig({ ...process.env, DATABASE_URL: url.toString(), CAIRN_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'), LOG_LEVEL: 'silent' });
  return { config, drop: () => admin(`drop database if exists ${name} with (force)`) };
}

export const ms = (start: number) => performance.now() - start;

export function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

export function report(title: string, rows: Record<string, string | number>): void {
  process.stdout.write(`\n${title}\n`);
  for (const [k, v] of Object.entries(rows)) process.stdout.write(`  ${k.padEnd(44)} ${typeof v === 'number' ? v.toFixed(2) : v}\n`);
}

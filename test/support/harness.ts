// One fresh database per test file, and helpers to run the real web and worker against it.
import { testKeyring } from './config.ts';
import { afterAll, beforeAll, inject } from 'vitest';
import type { Knex } from 'knex';
import type { EnvMode } from '../../src/domain/tenancy/keys.ts';
import type { Config } from '../../src/config.ts';
import type { Logger } from '../../src/log.ts';
import { createDb } from '../../src/db.ts';
import { createEnvWithKeys, type CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { startWeb, type WebHandle } from '../../src/server.ts';
import type { AppOptions } from '../../src/app/app.ts';
import { cloneDatabase, type TestDatabase } from './pg.ts';
import { testConfig } from './config.ts';

export interface Harness {
  database: TestDatabase;
  config: Config;
  db: Knex;
  close(): Promise<void>;
}

export async function createHarness(overrides: Record<string, string> = {}): Promise<Harness> {
  const database = await cloneDatabase(inject('templateDatabase'));
  const config = testConfig(database.url, overrides);
  const db = createDb(config, { poolMax: 4 });
  return {
    database,
    config,
    db,
    async close() {
      await db.destroy();
      await database.drop();
    },
  };
}

let counter = 0;

/** A new environment with a publishable and a secret key (all scopes). */
/** The number in the first column of a query's first row (`select count(*) as n …`). */
export async function sqlNumber(db: Knex, sql: string, bindings: readonly Knex.RawBinding[] = []): Promise<number> {
  const { rows } = await db.raw<{ rows: Record<string, string | number>[] }>(sql, bindings);
  return Number(Object.values(rows[0]!)[0]);
}

export async function createTestEnv(db: Knex, name?: string, mode: EnvMode = 'test'): Promise<CreatedEnv> {
  counter += 1;
  return createEnvWithKeys(db, name ?? `orgs/test-org/projects/p${process.pid}/envs/e${counter}`, mode, testKeyring());
}

/** What startWeb takes beyond the configuration, less the address (tests listen on 127.0.0.1:0). */
export type TestWebOptions = AppOptions & { log?: Logger };

export async function startTestWeb(h: Harness, options: TestWebOptions = {}): Promise<WebHandle> {
  return startWeb(h.config, { ...options, host: '127.0.0.1', port: 0 });
}

/**
 * A test file's database and web, made before its tests and stopped after them (read them inside
 * tests, or copy them in a beforeAll of the file: `({ h, web } = stack)`). `env` sets configuration
 * variables of both (createHarness); a function is called in the beforeAll, for values known only
 * then (a server an earlier beforeAll started). `atBaseUrl` makes the web listen at its
 * CAIRN_BASE_URL, a free port on 127.0.0.1, for those who must call it back there (identity
 * providers, browsers following its links). Registered first in a file, its afterAll runs after
 * the file's own (vitest runs afterAll hooks in reverse), so workers the file starts stop first.
 */
export function useWeb(
  options: TestWebOptions & { atBaseUrl?: boolean } = {},
  env: Record<string, string> | (() => Record<string, string>) = {},
): { h: Harness; web: WebHandle } {
  const stack = {} as { h: Harness; web: WebHandle };
  const { atBaseUrl, ...webOptions } = options;
  beforeAll(async () => {
    const vars = typeof env === 'function' ? env() : env;
    if (!atBaseUrl) {
      stack.h = await createHarness(vars);
      stack.web = await startTestWeb(stack.h, webOptions);
      return;
    }
    const { freePort } = await import('./own-postgres.ts');
    const port = await freePort();
    stack.h = await createHarness({ CAIRN_BASE_URL: `http://127.0.0.1:${port}`, ...vars });
    stack.web = await startWeb(stack.h.config, { ...webOptions, host: '127.0.0.1', port });
  });
  afterAll(async () => {
    await stack.web?.stop();
    await stack.h?.close();
  });
  return stack;
}

export interface Answer<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

/** fetch with JSON in and out, for API tests. */
export async function call<T = Record<string, unknown>>(
  base: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

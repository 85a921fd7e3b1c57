// Builds the migrated template database once per schema version (under an advisory lock, so
// parallel runs share it) and hands its name to the test files.
import type { TestProject } from 'vitest/node';
import { runMigrations } from '../src/migrate.ts';
import { databaseUrl, schemaFingerprint, withAdmin } from './support/pg.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const template = `cairn_tpl_${schemaFingerprint()}`;
  await withAdmin(async (c) => {
    await c.query('select pg_advisory_lock(727274)');
    try {
      const exists = await c.query('select 1 from pg_database where datname = $1', [template]);
      if (exists.rowCount) {
        // A template built on an earlier day: error_events' day partitions must reach past today.
        await withAdmin(
          (t) => t.query("select cairn_error_event_partitions((now() at time zone 'UTC')::date - 1, 16)"),
          databaseUrl(template),
        );
        return;
      }
      const building = `${template}_build`;
      await c.query(`drop database if exists ${building} with (force)`);
      await c.query(`create database ${building}`);
      await runMigrations({ DATABASE_URL: databaseUrl(building) });
      await c.query(`alter database ${building} rename to ${template}`);
    } finally {
      await c.query('select pg_advisory_unlock(727274)');
    }
  });
  project.provide('templateDatabase', template);
}

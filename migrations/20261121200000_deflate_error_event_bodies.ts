// Error tracking, speed: a stored event's body moves from jsonb to deflated JSON in a
// bytea column (src/domain/observability/event-body.ts says why and what it measured). Existing
// rows are not rewritten, so a release phase never rewrites a table of millions of events: they
// keep their jsonb `body`, and exactly one of the two columns is set on every row.
//
// The new column's storage is EXTERNAL: the bytes are deflated already, so Postgres should not try
// to compress them again.
import type { Knex } from 'knex';
import { inflateRawSync } from 'node:zlib';

const batch = 1000;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('error_events', (t) => {
    t.binary('body_deflated');
    t.setNullable('body');
  });
  await knex.raw('alter table error_events alter column body_deflated set storage external');
  await knex.raw(
    'alter table error_events add constraint error_events_one_body check (num_nonnulls(body, body_deflated) = 1)',
  );
}

export async function down(knex: Knex): Promise<void> {
  // The previous schema holds only jsonb: inflate the new rows back into it, a batch at a time.
  for (;;) {
    const rows = await knex('error_events')
      .whereNotNull('body_deflated')
      .orderBy('uid')
      .limit(batch)
      .select<{ uid: string; body_deflated: Buffer }[]>('uid', 'body_deflated');
    if (rows.length === 0) break;
    const opened = rows.map(
      (r) => `{"uid":${JSON.stringify(r.uid)},"body":${inflateRawSync(r.body_deflated).toString('utf8')}}`,
    );
    await knex.raw(
      `update error_events e set body = x.body, body_deflated = null
       from jsonb_to_recordset(?::jsonb) as x(uid text, body jsonb) where e.uid = x.uid`,
      [`[${opened.join(',')}]`],
    );
  }
  await knex.raw('alter table error_events drop constraint error_events_one_body');
  await knex.schema.alterTable('error_events', (t) => {
    t.dropColumn('body_deflated');
    t.dropNullable('body');
  });
}

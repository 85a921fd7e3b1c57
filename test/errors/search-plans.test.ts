// The plans of the group list (docs/api.md "Search") on an environment of 10,000 groups beside two
// more of 45,000 each, their tags and users: each order reads its own index (env_id, column, id)
// and stops at the page, a tag, release or user filter reads the facet tables by index, and no
// plan scans error_groups (or a facet table) across environments.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorGroupSort } from '../../src/contract/errors.ts';
import { listGroupsQuery } from '../../src/domain/errors/groups/queries.ts';
import { parseSearch } from '../../src/domain/errors/search/parse.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';

const stack = {} as { h: Harness };
let envId = '';

/** `n` groups of an environment with four tags each, one in ten with a user, spread over 60 days. */
async function seed(env: string, n: number): Promise<void> {
  const db = stack.h.db;
  await db.raw(
    `insert into error_groups (id, env_id, fingerprint, title, culprit, service_name, state, etag,
       first_seen_time, last_seen_time, occurrence_count, user_count, first_release)
     select ? || lpad(i::text, 26, '0'), ?, 'fp' || i, 'TypeError: failure number ' || i, 'src/f' || (i % 300) || '.ts',
       'svc' || (i % 5), (array['unresolved', 'acknowledged', 'resolved'])[1 + i % 3], 'etag',
       now() - (i % 5000) * interval '17 minutes' - interval '1 day', now() - (i % 5000) * interval '17 minutes',
       1 + (i * 7919) % 10000, (i * 31) % 200, 'r' || (i % 50)
     from generate_series(1, ?) i`,
    [`eg_${env.slice(-4)}`, env, n],
  );
  await db.raw(
    `insert into error_group_tags (group_id, env_id, key, value, count, last_seen_time)
     select g.id, g.env_id, t.key, t.value, 1, g.last_seen_time
       from (select id, env_id, last_seen_time, row_number() over (order by id) i from error_groups where env_id = ?) g,
       lateral (values ('browser', (array['Chrome', 'Firefox', 'Safari'])[1 + g.i % 3]), ('tenant', 't' || (g.i % 100)),
                       ('release', 'r' || (g.i % 50)), ('level', (array['error', 'warning'])[1 + g.i % 2])) t(key, value)`,
    [env],
  );
  await db.raw(
    `insert into error_group_users (group_id, env_id, user_key, user_id, email, count, first_seen_time, last_seen_time)
     select g.id, g.env_id, 'id:u' || (g.i % 500), 'u' || (g.i % 500), 'U' || (g.i % 500) || '@example.com', 1, now(), now()
       from (select id, env_id, row_number() over (order by id) i from error_groups where env_id = ?) g
      where g.i % 10 = 0`,
    [env],
  );
}

beforeAll(async () => {
  stack.h = await createHarness();
  const envs = [await createTestEnv(stack.h.db), await createTestEnv(stack.h.db), await createTestEnv(stack.h.db)];
  for (const [i, e] of envs.entries()) await seed(e.env.id, i === 0 ? 10_000 : 45_000);
  envId = envs[0]!.env.id;
  await stack.h.db.raw('analyze error_groups, error_group_tags, error_group_users');
}, 120_000);
afterAll(async () => {
  await stack.h?.close();
});

async function plan(q: string, sort: ErrorGroupSort): Promise<string> {
  const sql = listGroupsQuery(stack.h.db, envId, { terms: parseSearch(q), sort }, undefined, 51).toString();
  const { rows } = await stack.h.db.raw<{ rows: { 'QUERY PLAN': string }[] }>(`explain ${sql}`);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

const sortIndex: Record<ErrorGroupSort, string> = {
  last_seen: 'error_groups_env_last_seen_idx',
  first_seen: 'error_groups_env_first_seen_idx',
  events: 'error_groups_env_events_idx',
  users: 'error_groups_env_users_idx',
};

describe('the group list on 10,000 groups of 100,000', () => {
  for (const sort of Object.keys(sortIndex) as ErrorGroupSort[]) {
    it(`sort=${sort} reads its index backward and stops at the page`, async () => {
      const p = await plan('', sort);
      expect(p).toMatch(new RegExp(`Index Scan Backward using ${sortIndex[sort]} on error_groups`));
      expect(p).toMatch(/^Limit/);
      expect(p).not.toMatch(/Seq Scan|Sort/);
    });
  }

  it('a tag, release, level or user term reads the facets by index, in any order', async () => {
    for (const sort of Object.keys(sortIndex) as ErrorGroupSort[]) {
      for (const q of [
        'browser:Chrome',
        'release:r7 !level:warning',
        'tenant:t42 is:unresolved',
        'user:u70',
        'user:U70@EXAMPLE.com',
      ]) {
        const p = await plan(q, sort);
        expect(p, `${q} sort=${sort}:\n${p}`).not.toMatch(/Seq Scan/);
        expect(p).toMatch(/error_group_(tags|users)/);
      }
    }
  });
});

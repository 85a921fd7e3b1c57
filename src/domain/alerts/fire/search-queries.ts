// Which of a batch's candidate groups each rule's search (`q`, docs/api.md "Search") covers: the
// search module's own SQL (errors/search/queries.ts), one select per rule over its groups, all in
// one statement on the store's transaction, so a batch costs one round trip however many rules
// search. The statement is built with knex (as the group list builds it) and run on the
// transaction's connection with its bindings as $n parameters.
import type { Knex } from 'knex';
import type { SqlTx } from '../../../db.ts';
import { whereSearch } from '../../errors/search/queries.ts';
import type { SearchTerm } from '../../errors/search/types.ts';

/** A rule's parsed search and the groups of its environment it may fire for. */
export interface RuleSearch {
  rule_id: string;
  env_id: string;
  terms: readonly SearchTerm[];
  group_ids: readonly string[];
}

/** The (rule, group) pairs whose group every term of the rule's search holds for. */
export async function searchMatches(
  tx: SqlTx,
  knex: Knex,
  searches: readonly RuleSearch[],
): Promise<{ rule_id: string; group_id: string }[]> {
  if (searches.length === 0) return [];
  const selects = searches.map((s) => {
    const q = knex
      .select(knex.raw('?::text as rule_id', [s.rule_id]), 'g.id as group_id')
      .from('error_groups as g')
      .where('g.env_id', s.env_id)
      .whereRaw('g.id = any(?::text[])', [s.group_ids as string[]]);
    whereSearch(q, s.env_id, s.terms);
    return q;
  });
  const [first, ...rest] = selects;
  const { sql, bindings } = (rest.length > 0 ? first!.unionAll(rest, true) : first!).toSQL().toNative();
  const { rows } = await tx.executeSql(sql, [...bindings]);
  return rows as { rule_id: string; group_id: string }[];
}

// What the /v1 routes of every feature declare alike: who may call them (a secret key holding one
// scope, docs/api.md "Keys and scopes") and how a list answers (docs/api.md "Lists").
import type { Keyset, PageQuery } from '../../contract/pages.ts';
import type { SecretScope } from '../../domain/tenancy/keys.ts';
import type { AppDeps } from '../../http/context.ts';
import { paginate } from '../../http/paginate.ts';

/** The OpenAPI tag of a secret-key route and the scope its key must hold; spread into `defineRoute`. */
export function secretKey<S extends SecretScope>(tag: string, scope: S) {
  return { tags: [tag], auth: 'secret', scope } as const;
}

/** A list answer, `{ [collection]: Item[], next_page_token? }`, as contract/pages.ts `pageOf` declares it. */
export type ListPage<C extends string, Item> = { [K in C]: Item[] } & { next_page_token?: string };

/**
 * One page of a list (http/paginate.ts) under its collection's name, each row through the
 * feature's presenter.
 */
export async function listPage<C extends string, Row, P, Item>(
  deps: Pick<AppDeps, 'config'>,
  query: PageQuery,
  list: { collection: C; keyset: Keyset<Row, P>; present: (row: Row) => Item },
  fetch: (after: P | undefined, limit: number) => Promise<Row[]>,
): Promise<ListPage<C, Item>> {
  const page = await paginate(deps.config, query, list.keyset, fetch);
  return { [list.collection]: page.items.map(list.present), next_page_token: page.next_page_token } as ListPage<
    C,
    Item
  >;
}

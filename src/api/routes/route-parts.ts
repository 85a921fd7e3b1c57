// What the /v1 routes of every feature declare alike: who may call them (a secret key holding one
// scope, docs/api.md "Keys and scopes") and how a list answers (docs/api.md "Lists").
import type { z } from 'zod';
import { pageQuery, type Keyset, type PageQuery } from '../../contract/pages.ts';
import type { SecretScope } from '../../domain/tenancy/keys.ts';
import type { AppDeps, Principal } from '../../http/context.ts';
import { paginate, type Page } from '../../http/paginate.ts';
import { defineRoute, type Method, type RouteDef } from '../../http/route.ts';

/** The OpenAPI tag of a secret-key route and the scope its key must hold; spread into `defineRoute`. */
export function secretKey<S extends SecretScope>(tag: string, scope: S) {
  return { tags: [tag], auth: 'secret', scope } as const;
}

/** What a route's work is given: the app's dependencies and the calling key. */
export type Caller = { deps: AppDeps; principal: Principal };

/** A list answer, `{ [collection]: Item[], next_page_token? }`, as contract/pages.ts `pageOf` declares it. */
export type ListPage<C extends string, Item> = { [K in C]: Item[] } & { next_page_token?: string };

const answer = <C extends string, Item>(collection: C, page: Page<unknown>, items: Item[]) =>
  ({ [collection]: items, next_page_token: page.next_page_token }) as ListPage<C, Item>;

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
  return answer(list.collection, page, page.items.map(list.present));
}

/**
 * One page of a list whose items each carry rows of their own (a firing's actions, a delivery's
 * attempts): those of the whole page are read in one query, not one per item.
 */
export async function listPageWith<C extends string, Row, P, Child, Item>(
  deps: Pick<AppDeps, 'config'>,
  query: PageQuery,
  list: { collection: C; keyset: Keyset<Row, P>; present: (row: Row, children: Child[]) => Item },
  fetch: (after: P | undefined, limit: number) => Promise<Row[]>,
  children: { fetch: (rows: Row[]) => Promise<Child[]>; of: (child: Child, row: Row) => boolean },
): Promise<ListPage<C, Item>> {
  const page = await paginate(deps.config, query, list.keyset, fetch);
  const all = await children.fetch(page.items);
  return answer(
    list.collection,
    page,
    page.items.map((row) =>
      list.present(
        row,
        all.filter((c) => children.of(c, row)),
      ),
    ),
  );
}

/** The item type of a list schema's collection. */
type ItemOf<S extends z.ZodType, C extends string> = z.input<S> extends { [K in C]: (infer I)[] } ? I : never;

/** A list route's declaration: its answer, how its rows are ordered, read and presented. */
export interface ListSpec<C extends string, Row, P, S extends z.ZodType> {
  summary: string;
  collection: C;
  response: { description: string; schema: S };
  keyset: Keyset<Row, P>;
  present(row: Row, principal: Principal): ItemOf<S, C>;
  fetch(caller: Caller, after: P | undefined, limit: number): Promise<Row[]>;
}

/** Where a secret-key route is and who may call it, as a feature's `on…` helpers declare it. */
interface SecretRoute {
  method: Method;
  path: string;
  operationId: string;
  tags: readonly string[];
  auth: 'secret';
  scope: SecretScope;
  params: z.ZodType;
}

/** A list route: the page query in, one page of `fetch`'s rows (listPage) out. */
export function listRoute<C extends string, Row, P, S extends z.ZodType>(
  route: SecretRoute,
  o: ListSpec<C, Row, P, S>,
): RouteDef {
  return defineRoute({
    ...route,
    summary: o.summary,
    query: pageQuery,
    response: { status: 200, ...o.response },
    async handle({ query, principal, deps }) {
      const list = { collection: o.collection, keyset: o.keyset, present: (row: Row) => o.present(row, principal) };
      const page = await listPage(deps, query, list, (after, limit) => o.fetch({ deps, principal }, after, limit));
      return page as z.input<S>;
    },
  });
}

// A resource kept in an environment (docs/api.md "Resources"): its collection at
// `/v1/orgs/{org}/projects/{project}/envs/{env}/<collection>`, each item at `…/<collection>/{<id>}`,
// read with a secret key holding one scope and changed with one holding another. `envResource`
// declares once what its routes share (the paths, the tag and scopes, the path parameters) and
// builds the routes whose work is the same for every resource: create (201), list (one page,
// docs/api.md "Lists"), get, update (PATCH) and delete (204, no body). What a resource does beyond
// those is declared on `onItem` (an action such as `:rotateSecret`) or `onItemList` (a list under
// one item, such as a rule's firings).
import { z } from 'zod';
import { pageQuery } from '../../contract/pages.ts';
import { envParams } from '../../contract/tenancy.ts';
import type { SecretScope } from '../../domain/tenancy/keys.ts';
import { defineRoute, type Method, type RouteDef } from '../../http/route.ts';
import { listRoute, secretKey, type Caller, type ListSpec } from './route-parts.ts';

export const envPath = '/v1/orgs/{org}/projects/{project}/envs/{env}';

type Access = ReturnType<typeof secretKey<SecretScope>>;
type Answer<R extends z.ZodType> = { description: string; schema: R };

/** A route of the resource: its id and summary, what it answers, and its work. */
interface Spec<R extends z.ZodType, Args extends unknown[]> {
  operationId: string;
  summary: string;
  response: Answer<R>;
  run(caller: Caller, ...args: Args): Promise<z.input<R>>;
}

/** A route that reads a body: the same, with the body's schema. */
interface BodySpec<B extends z.ZodType, R extends z.ZodType, Args extends unknown[]> extends Spec<
  R,
  [...Args, z.output<B>]
> {
  body: B;
  example: z.input<B>;
}

const deleted = { status: 204, description: 'Deleted', schema: z.undefined(), type: 'empty' } as const;

/** A pair of scopes, `<family>:read` to read and `<family>:write` to change (`observability`, …). */
type ScopeFamily = SecretScope extends `${infer F}:${string}` ? F : never;

/** What a resource is: its tag, its scopes, its collection and the path parameter of its items. */
interface Resource<C extends string, IP extends z.ZodObject> {
  tag: string;
  scopes: ScopeFamily;
  collection: C;
  id: string;
  params: IP;
}

/** Where a resource's routes are and who may call them, spread into `defineRoute`. */
function placesOf<C extends string, IP extends z.ZodObject>(r: Resource<C, IP>) {
  const base = `${envPath}/${r.collection}`;
  const read = secretKey(r.tag, `${r.scopes}:read`) as Access;
  /** A route on one item: its method, what follows the item's id, who may call it, its id. */
  const onItem = (method: Method, suffix: string, access: Access, operationId: string) => ({
    method,
    operationId,
    path: `${base}/{${r.id}}${suffix}`,
    ...access,
    params: r.params,
  });
  return {
    read,
    write: secretKey(r.tag, `${r.scopes}:write`) as Access,
    onItem,
    /** A list under one item (a rule's firings, an endpoint's deliveries): `…/{id}/<collection>`, a page of it. */
    onItemList: <S extends z.ZodType>(collection: string, operationId: string, response: Answer<S>) => ({
      ...onItem('get', `/${collection}`, read, operationId),
      query: pageQuery,
      response: { status: 200, ...response },
    }),
    onCollection: (method: Method, access: Access, operationId: string) => ({
      method,
      operationId,
      path: base,
      ...access,
      params: envParams,
    }),
  };
}

/**
 * A resource's routes. `tag`: their OpenAPI tag; `scopes`: the pair a key must hold one of;
 * `path`: `<collection>/{<id>}` below the environment, the collection's segment being also its
 * list's name, and `<id>` the items' path parameter, which `params` declares with the environment's.
 */
export function envResource<C extends string, I extends string, IP extends z.ZodObject<Record<I, z.ZodType>>>(
  tag: string,
  scopes: ScopeFamily,
  path: `${C}/{${I}}`,
  params: IP,
) {
  const [collection, id] = path.split('/{') as [C, string];
  const r: Resource<C, IP> = { tag, scopes, collection, id: id.slice(0, -1), params };
  const { read, write, onItem, onItemList, onCollection } = placesOf(r);
  /** The item's id, from the path parameters the kernel validated against `params`. */
  const idOf = (params: unknown) => (params as Record<string, string>)[r.id]!;

  return {
    read,
    write,
    onItem,
    onItemList,

    create<B extends z.ZodType, R extends z.ZodType>(o: BodySpec<B, R, []>): RouteDef {
      return defineRoute({
        ...onCollection('post', write, o.operationId),
        summary: o.summary,
        body: o.body,
        example: o.example as never,
        response: { status: 201, ...o.response },
        handle: ({ body, principal, deps }) => o.run({ deps, principal }, body as z.output<B>),
      });
    },

    list<Row, P, S extends z.ZodType>(
      o: Omit<ListSpec<C, Row, P, S>, 'collection'> & { operationId: string },
    ): RouteDef {
      return listRoute(onCollection('get', read, o.operationId), { ...o, collection: r.collection });
    },

    get<R extends z.ZodType>(o: Spec<R, [id: string]>): RouteDef {
      return defineRoute({
        ...onItem('get', '', read, o.operationId),
        summary: o.summary,
        response: { status: 200, ...o.response },
        handle: ({ params, principal, deps }) => o.run({ deps, principal }, idOf(params)),
      });
    },

    update<B extends z.ZodType, R extends z.ZodType>(o: BodySpec<B, R, [id: string]>): RouteDef {
      return defineRoute({
        ...onItem('patch', '', write, o.operationId),
        summary: o.summary,
        body: o.body,
        example: o.example as never,
        response: { status: 200, ...o.response },
        handle: ({ params, body, principal, deps }) => o.run({ deps, principal }, idOf(params), body as z.output<B>),
      });
    },

    delete(o: { operationId: string; summary: string; run(caller: Caller, id: string): Promise<unknown> }): RouteDef {
      return defineRoute({
        ...onItem('delete', '', write, o.operationId),
        summary: o.summary,
        response: deleted,
        async handle({ params, principal, deps }) {
          await o.run({ deps, principal }, idOf(params));
          return undefined;
        },
      });
    },
  };
}

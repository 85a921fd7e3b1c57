// What source maps and minified files share as resources of a release: the upload and the paged list.
import { z } from 'zod';
import {
  releaseFileQueries,
  type ReleaseFileTable,
  type SourceMapRow,
} from '../../../domain/errors/source-maps/queries.ts';
import { releaseFileMaxBytes } from '../../../domain/errors/source-maps/uploads.ts';
import { pageQuery, releaseParams, type releaseFileResource } from '../../../contract/errors.ts';
import { releaseFilePages, releaseFileView } from '../../../domain/errors/source-maps/present.ts';
import { pageOf } from '../../../contract/pages.ts';
import type { AppDeps } from '../../../http/context.ts';
import { defineRoute, type RouteDef } from '../../../http/route.ts';
import { listPage, secretKey } from '../route-parts.ts';

type Collection = 'source_maps' | 'minified_sources';

/**
 * What a collection's upload takes: its summaries, its body (a `file` and its content) with an
 * example of it (for the OpenAPI document), and how it is stored.
 */
interface ReleaseFileKind<B extends z.ZodType<{ file: string }>> {
  uploadSummary: string;
  listSummary: string;
  stored: string;
  body: B;
  example: z.input<B>;
  store: (deps: AppDeps, envId: string, release: string, body: z.output<B>) => Promise<SourceMapRow>;
}

/**
 * The two routes of a release's collection (`…/releases/{release}/<collection>`), named after its
 * resource (`upload<Name>`, `list<Name>s`): `PUT` stores or replaces one file, named by `file`,
 * and answers 201 with it; `GET` answers a page of its files, oldest upload first.
 */
export function releaseFileRoutes<B extends z.ZodType<{ file: string }>>(
  collection: Collection,
  name: string,
  resource: ReturnType<typeof releaseFileResource>,
  o: ReleaseFileKind<B>,
): [upload: RouteDef, list: RouteDef] {
  const path = `/v1/orgs/{org}/projects/{project}/envs/{env}/releases/{release}/${collection}`;
  const upload = defineRoute({
    method: 'put',
    path,
    operationId: `upload${name}`,
    summary: o.uploadSummary,
    ...secretKey('Error tracking', 'observability:write'),
    params: releaseParams,
    bodyLimit: releaseFileMaxBytes,
    body: o.body,
    // Checked against the body where ReleaseFileKind is filled in; the conditional type of
    // RouteDef's `example` does not resolve for a generic B.
    example: o.example as never,
    response: { status: 201, description: o.stored, schema: resource },
    async handle({ params, body, principal, deps }) {
      const row = await o.store(deps, principal.envId, params.release, body as z.output<B>);
      return releaseFileView(principal.envName, collection, row);
    },
  });
  const list = { operationId: `list${name}s`, summary: o.listSummary };
  return [upload, listReleaseFiles(collection, path, list, resource)];
}

function listReleaseFiles(
  collection: Collection,
  path: string,
  doc: { operationId: string; summary: string },
  resource: ReturnType<typeof releaseFileResource>,
): RouteDef {
  const keyset = releaseFilePages(collection);
  const table: ReleaseFileTable = `error_${collection}`;
  return defineRoute({
    method: 'get',
    path,
    ...doc,
    ...secretKey('Error tracking', 'observability:read'),
    params: releaseParams,
    query: pageQuery,
    response: {
      status: 200,
      description: `A page of ${collection.replace('_', ' ')}`,
      schema: pageOf(collection, resource),
    },
    async handle({ params, query, principal, deps }) {
      const present = (r: SourceMapRow) => releaseFileView(principal.envName, collection, r);
      return listPage(deps, query, { collection, keyset, present }, (after, limit) =>
        releaseFileQueries(deps.db, table).list(principal.envId, params.release, after, limit),
      );
    },
  });
}

// What source maps and minified files share as resources of a release: the paged list.
import { z } from 'zod';
import { releaseFileQueries, type ReleaseFileTable } from '../../../domain/errors/source-maps/queries.ts';
import { pageQuery, releaseParams, type releaseFileResource } from '../../../contract/errors.ts';
import { releaseFilePages, releaseFileView } from '../../../domain/errors/source-maps/present.ts';
import { pageOf } from '../../../contract/pages.ts';
import { paginate } from '../../../http/paginate.ts';
import { defineRoute } from '../../../http/route.ts';

/** `GET` on a release's collection: a page of its files, oldest upload first. */
export function listReleaseFiles(o: {
  path: string;
  operationId: string;
  summary: string;
  table: ReleaseFileTable;
  collection: string;
  resource: ReturnType<typeof releaseFileResource>;
}) {
  const keyset = releaseFilePages(o.collection);
  return defineRoute({
    method: 'get',
    path: o.path,
    operationId: o.operationId,
    summary: o.summary,
    tags: ['Error tracking'],
    auth: 'secret',
    scope: 'observability:read',
    params: releaseParams,
    query: pageQuery,
    response: {
      status: 200,
      description: `A page of ${o.collection.replace('_', ' ')}`,
      schema: pageOf(o.collection, o.resource),
    },
    async handle({ params, query, principal, deps }) {
      const page = await paginate(deps.config, query, keyset, (after, limit) =>
        releaseFileQueries(deps.db, o.table).list(principal.envId, params.release, after, limit),
      );
      return {
        [o.collection]: page.items.map((r) => releaseFileView(principal.envName, o.collection, r)),
        next_page_token: page.next_page_token,
      } as z.input<ReturnType<typeof pageOf<string, typeof o.resource>>>;
    },
  });
}

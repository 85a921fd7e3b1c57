// What source maps and minified files share as resources of a release: their shape, and the paged list.
import { z } from 'zod';
import {
  releaseFileQueries,
  type ReleaseFileTable,
  type SourceMapRow,
} from '../../../domain/observability/source-maps/queries.ts';
import { decodePageToken, encodePageToken } from '../../../domain/observability/groups/page-token.ts';
import { defineRoute } from '../../route.ts';
import { pageSecret } from './groups.ts';
import { pageQuery, releaseParams } from './schema.ts';

export const releaseFileResource = (id: string) =>
  z
    .object({
      name: z.string(),
      release: z.string(),
      file: z.string(),
      size_bytes: z.number().int(),
      sha256: z.string(),
      create_time: z.string(),
    })
    .meta({ id });

export type ReleaseFileView = z.input<ReturnType<typeof releaseFileResource>>;

export const releaseFileView = (envName: string, collection: string, r: SourceMapRow): ReleaseFileView => ({
  name: `${envName}/releases/${r.release}/${collection}/${r.id}`,
  release: r.release,
  file: r.file,
  size_bytes: r.size_bytes,
  sha256: r.sha256,
  create_time: new Date(r.create_time).toISOString(),
});

/** `GET` on a release's collection: a page of its files, oldest upload first. */
export function listReleaseFiles(o: {
  path: string;
  operationId: string;
  summary: string;
  table: ReleaseFileTable;
  collection: string;
  resource: ReturnType<typeof releaseFileResource>;
}) {
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
      schema: z.object({ [o.collection]: z.array(o.resource), next_page_token: z.string().optional() }),
    },
    async handle({ params, query, principal, deps }) {
      const after = decodePageToken(pageSecret(deps), query.page_token);
      const rows = await releaseFileQueries(deps.db, o.table).list(
        principal.envId,
        params.release,
        after?.id,
        query.page_size + 1,
      );
      const page = rows.slice(0, query.page_size);
      const last = page.at(-1);
      return {
        [o.collection]: page.map((r) => releaseFileView(principal.envName, o.collection, r)),
        ...(rows.length > query.page_size && last
          ? { next_page_token: encodePageToken(pageSecret(deps), { t: '', id: last.id }) }
          : {}),
      };
    },
  });
}

// Source maps per release (CONTRACT.md): PUT uploads one map for one minified file, GET lists them.
// Maps of real bundles are megabytes, so this route takes bodies up to 50 MiB (docs/api.md).
import { z } from 'zod';
import { sourceMapQueries, type SourceMapRow } from '../../../domain/observability/source-map-queries.ts';
import { uploadSourceMap } from '../../../domain/observability/source-maps.ts';
import { decodePageToken, encodePageToken } from '../../../domain/observability/page-token.ts';
import { defineRoute } from '../../route.ts';
import { pageSecret } from './groups.ts';
import { pageQuery, releaseParams } from './schema.ts';

const path = '/v1/orgs/{org}/projects/{project}/envs/{env}/releases/{release}/source_maps';

const sourceMapResource = z.object({
  name: z.string(), release: z.string(), file: z.string(), size_bytes: z.number().int(), sha256: z.string(), create_time: z.string(),
}).meta({ id: 'SourceMap' });

const view = (envName: string, r: SourceMapRow): z.input<typeof sourceMapResource> => ({
  name: `${envName}/releases/${r.release}/source_maps/${r.id}`, release: r.release, file: r.file,
  size_bytes: r.size_bytes, sha256: r.sha256, create_time: new Date(r.create_time).toISOString(),
});

export const uploadMap = defineRoute({
  method: 'put', path, operationId: 'uploadSourceMap', summary: 'Upload (or replace) the source map of one minified file',
  tags: ['Error tracking'], auth: 'secret', scope: 'observability:write', params: releaseParams, bodyLimit: 50 * 1024 * 1024,
  body: z.strictObject({
    file: z.string().min(1).max(2048).meta({ description: 'URL or path of the minified file, as frames print it' }),
    source_map: z.looseObject({ version: z.literal(3) }),
  }),
  response: { status: 201, description: 'The stored map', schema: sourceMapResource },
  async handle({ params, body, principal, deps }) {
    const row = await uploadSourceMap(deps, principal!.envId, params.release, body.file, body.source_map);
    return view(principal!.envName, row);
  },
});

export const listMaps = defineRoute({
  method: 'get', path, operationId: 'listSourceMaps', summary: 'The source maps of a release',
  tags: ['Error tracking'], auth: 'secret', scope: 'observability:read', params: releaseParams, query: pageQuery,
  response: { status: 200, description: 'A page of maps', schema: z.object({ source_maps: z.array(sourceMapResource), next_page_token: z.string().optional() }) },
  async handle({ params, query, principal, deps }) {
    const after = decodePageToken(pageSecret(deps), query.page_token);
    const rows = await sourceMapQueries(deps.db).list(principal!.envId, params.release, after?.id, query.page_size + 1);
    const page = rows.slice(0, query.page_size);
    const last = page.at(-1);
    return {
      source_maps: page.map((r) => view(principal!.envName, r)),
      ...(rows.length > query.page_size && last ? { next_page_token: encodePageToken(pageSecret(deps), { t: '', id: last.id }) } : {}),
    };
  },
});

export const sourceMapRoutes = [uploadMap, listMaps];

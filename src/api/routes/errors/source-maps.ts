// Source maps per release (docs/api.md): PUT uploads one map for one minified file, GET lists them.
// Maps of real bundles are megabytes, so this route takes bodies up to 50 MiB (docs/api.md).
import { z } from 'zod';
import { releaseFileMaxBytes, uploadSourceMap } from '../../../domain/errors/source-maps/uploads.ts';
import { defineRoute } from '../../../http/route.ts';
import { listReleaseFiles } from './release-files.ts';
import { releaseFileName, sourceMapResource, releaseParams } from '../../../contract/errors.ts';
import { releaseFileView } from '../../../domain/errors/source-maps/present.ts';

const path = '/v1/orgs/{org}/projects/{project}/envs/{env}/releases/{release}/source_maps';

export const uploadMap = defineRoute({
  method: 'put',
  path,
  operationId: 'uploadSourceMap',
  summary: 'Upload (or replace) the source map of one minified file',
  tags: ['Error tracking'],
  auth: 'secret',
  scope: 'observability:write',
  params: releaseParams,
  bodyLimit: releaseFileMaxBytes,
  body: z.strictObject({
    file: releaseFileName.meta({ description: 'URL or path of the minified file, as frames print it' }),
    source_map: z.looseObject({ version: z.literal(3) }),
  }),
  response: { status: 201, description: 'The stored map', schema: sourceMapResource },
  async handle({ params, body, principal, deps }) {
    const row = await uploadSourceMap(deps, principal.envId, params.release, body.file, body.source_map);
    return releaseFileView(principal.envName, 'source_maps', row);
  },
});

export const listMaps = listReleaseFiles({
  path,
  operationId: 'listSourceMaps',
  summary: 'The source maps of a release',
  table: 'error_source_maps',
  collection: 'source_maps',
  resource: sourceMapResource,
});

export const sourceMapRoutes = [uploadMap, listMaps];

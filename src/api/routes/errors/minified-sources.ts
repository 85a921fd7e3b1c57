// Minified files per release (docs/api.md "Minified files"): PUT uploads the text of one minified
// file, GET lists them. With a source map that has no `sourcesContent`, they name frames by the
// function around them in the minified code (docs/api.md). Bundles are megabytes: bodies up to 50 MiB.
import { z } from 'zod';
import { releaseFileMaxBytes, uploadMinifiedSource } from '../../../domain/errors/source-maps/uploads.ts';
import { defineRoute } from '../../../http/route.ts';
import { listReleaseFiles } from './release-files.ts';
import { minifiedSourceResource, releaseFileName, releaseParams } from '../../../contract/errors.ts';
import { releaseFileView } from '../../../domain/errors/source-maps/present.ts';

const path = '/v1/orgs/{org}/projects/{project}/envs/{env}/releases/{release}/minified_sources';
const resource = minifiedSourceResource;

export const uploadMinified = defineRoute({
  method: 'put',
  path,
  operationId: 'uploadMinifiedSource',
  summary: 'Upload (or replace) the text of one minified file',
  tags: ['Error tracking'],
  auth: 'secret',
  scope: 'observability:write',
  params: releaseParams,
  bodyLimit: releaseFileMaxBytes,
  body: z.strictObject({
    file: releaseFileName.meta({
      description: 'URL or path of the minified file, as frames print it (matched like source maps)',
    }),
    source: z.string().min(1).meta({ description: 'The text of the minified file, as served' }),
  }),
  response: { status: 201, description: 'The stored file', schema: resource },
  async handle({ params, body, principal, deps }) {
    const row = await uploadMinifiedSource(deps, principal.envId, params.release, body.file, body.source);
    return releaseFileView(principal.envName, 'minified_sources', row);
  },
});

export const listMinified = listReleaseFiles({
  path,
  operationId: 'listMinifiedSources',
  summary: 'The minified files of a release',
  table: 'error_minified_sources',
  collection: 'minified_sources',
  resource,
});

export const minifiedSourceRoutes = [uploadMinified, listMinified];

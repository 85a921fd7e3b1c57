// Source maps per release (docs/api.md): PUT uploads one map for one minified file, GET lists them.
// Maps of real bundles are megabytes, so this route takes bodies up to 50 MiB (docs/api.md).
import { z } from 'zod';
import { uploadSourceMap } from '../../../domain/errors/source-maps/uploads.ts';
import { releaseFileRoutes } from './release-files.ts';
import { releaseFileName, sourceMapResource } from '../../../contract/errors.ts';

export const [uploadMap, listMaps] = releaseFileRoutes('source_maps', 'SourceMap', sourceMapResource, {
  uploadSummary: 'Upload (or replace) the source map of one minified file',
  listSummary: 'The source maps of a release',
  stored: 'The stored map',
  body: z.strictObject({
    file: releaseFileName.meta({ description: 'URL or path of the minified file, as frames print it' }),
    source_map: z.looseObject({ version: z.literal(3) }),
  }),
  example: {
    file: 'https://shop.example.com/assets/app.min.js',
    source_map: {
      version: 3,
      file: 'app.min.js',
      sources: ['../src/cart.ts'],
      names: ['Cart', 'total'],
      mappings: 'AAAA,MAAMA,KAAK,CAACC',
    },
  },
  store: (deps, envId, release, body) => uploadSourceMap(deps, envId, release, body.file, body.source_map),
});

export const sourceMapRoutes = [uploadMap, listMaps];

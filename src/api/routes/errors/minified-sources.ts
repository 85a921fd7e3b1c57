// Minified files per release (docs/api.md "Minified files"): PUT uploads the text of one minified
// file, GET lists them. With a source map that has no `sourcesContent`, they name frames by the
// function around them in the minified code (docs/api.md). Bundles are megabytes: bodies up to 50 MiB.
import { z } from 'zod';
import { uploadMinifiedSource } from '../../../domain/errors/source-maps/uploads.ts';
import { releaseFileRoutes } from './release-files.ts';
import { minifiedSourceResource, releaseFileName } from '../../../contract/errors.ts';

export const [uploadMinified, listMinified] = releaseFileRoutes(
  'minified_sources',
  'MinifiedSource',
  minifiedSourceResource,
  {
    uploadSummary: 'Upload (or replace) the text of one minified file',
    listSummary: 'The minified files of a release',
    stored: 'The stored file',
    body: z.strictObject({
      file: releaseFileName.meta({
        description: 'URL or path of the minified file, as frames print it (matched like source maps)',
      }),
      source: z.string().min(1).meta({ description: 'The text of the minified file, as served' }),
    }),
    example: {
      file: 'https://shop.example.com/assets/app.min.js',
      source: 'class Cart{constructor(t){this.t=t}total(){return this.t.items.reduce((t,e)=>t+e.price,0)}}',
    },
    store: (deps, envId, release, body) => uploadMinifiedSource(deps, envId, release, body.file, body.source),
  },
);

export const minifiedSourceRoutes = [uploadMinified, listMinified];

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
    uploadDescription:
      'Stores the text of one minified file of a release, bodies up to 50 MiB; uploading the same file again replaces it. ' +
      'A source map is paired with the minified file of the same file, else the same path: where the map has no sourcesContent, a frame is named by the function around it in this code, its name mapped through the map. ' +
      'A file over 2048 characters or bytes is 400 invalid_request.',
    listSummary: 'The minified files of a release',
    listDescription:
      'Pages the minified files uploaded for a release, oldest upload first, each with its file, size and SHA-256.',
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

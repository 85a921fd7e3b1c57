// Source maps and minified files, the files of a release, as the API shows them (contract/errors.ts).
import type { ReleaseFile } from '../../../contract/errors.ts';
import { byId } from '../../../contract/pages.ts';
import type { SourceMapRow } from './queries.ts';

/** A release's files page by id, oldest upload first. */
export const releaseFilePages = (collection: string) => byId<SourceMapRow>(collection);

export const releaseFileView = (envName: string, collection: string, r: SourceMapRow): ReleaseFile => ({
  name: `${envName}/releases/${r.release}/${collection}/${r.id}`,
  release: r.release,
  file: r.file,
  size_bytes: r.size_bytes,
  sha256: r.sha256,
  create_time: new Date(r.create_time).toISOString(),
});

// What both drivers check before restoring a version.
import { AppError } from '../app-error.ts';
import type { ObjectVersion } from './object-store.ts';

/** The version to restore: it exists and has content (a delete marker has none). */
export function restorable(versions: ObjectVersion[], key: string, versionId: string): ObjectVersion {
  const version = versions.find((v) => v.versionId === versionId);
  if (!version) throw new AppError('not_found', `no version ${versionId} of ${key}`);
  if (version.isDeleteMarker)
    throw new AppError(
      'invalid_request',
      `version ${versionId} of ${key} is a delete marker; choose a version with content`,
    );
  return version;
}

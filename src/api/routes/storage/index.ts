// Application storage and versioning (paths from docs/api.md "Backups and storage").
// The `:listVersions` and `:restoreVersion` routes are mounted before the plain object routes so
// a key is never read as "…:listVersions" (an encoded key's ":" arrives as %3A and cannot clash).
import { z } from 'zod';
import {
  createBucket,
  deleteObject,
  enableVersioning,
  getObject,
  listBuckets,
  listVersions,
  maxObjectBytes,
  putObject,
  restoreVersion,
} from '../../../domain/storage/buckets.ts';
import { AppError } from '../../../app-error.ts';
import { defineRoute } from '../../../http/route.ts';
import {
  bucket,
  bucketList,
  bucketParams,
  createBucketBody,
  envParams,
  objectParams,
  restoreVersionBody,
  versionList,
  versionQuery,
  writeResult,
} from '../../../contract/storage.ts';
import { bucketResource, versionResource } from '../../../domain/storage/present.ts';
import { secretKey } from '../route-parts.ts';

const base = '/v1/orgs/{org}/projects/{project}/envs/{env}/buckets';

export const createBucketRoute = defineRoute({
  method: 'post',
  path: base,
  operationId: 'createBucket',
  description:
    'Creates a bucket, its own S3 bucket underneath, unversioned until enableVersioning. ' +
    'Names are 3-40 lower-case letters, digits and dashes (400 invalid_request otherwise); a name the environment already has is 409 conflict.',
  example: { name: 'avatars' },
  summary: 'Create a storage bucket',
  ...secretKey('Storage', 'storage:write'),
  params: envParams,
  body: createBucketBody,
  response: { status: 201, description: 'The bucket', schema: bucket },
  async handle({ principal, deps, body }) {
    return bucketResource(await createBucket(deps, principal.envId, body.name), principal.envName);
  },
});

export const listBucketsRoute = defineRoute({
  method: 'get',
  path: base,
  operationId: 'listBuckets',
  description:
    "Lists the environment's buckets, without pages, each with its name, whether versioning is on and its creation time.",
  summary: 'Storage buckets of the environment',
  ...secretKey('Storage', 'storage:read'),
  params: envParams,
  response: { status: 200, description: 'Buckets', schema: bucketList },
  async handle({ principal, deps }) {
    return { buckets: (await listBuckets(deps.db, principal.envId)).map((b) => bucketResource(b, principal.envName)) };
  },
});

export const enableVersioningRoute = defineRoute({
  method: 'post',
  path: `${base}/{bucket}:enableVersioning`,
  operationId: 'enableVersioning',
  description:
    'From now on an upload makes a new version instead of overwriting, and a delete without version_id leaves a delete marker. ' +
    'Versioning cannot be suspended through this API; an unknown bucket is 404 not_found.',
  summary: 'Keep every version of every object from now on',
  ...secretKey('Storage', 'storage:write'),
  params: bucketParams,
  response: { status: 200, description: 'The bucket', schema: bucket },
  async handle({ principal, deps, params }) {
    return bucketResource(await enableVersioning(deps, principal.envId, params.bucket), principal.envName);
  },
});

export const listVersionsRoute = defineRoute({
  method: 'get',
  path: `${base}/{bucket}/objects/{key}:listVersions`,
  operationId: 'listObjectVersions',
  description:
    'Lists the versions of exactly this key, delete markers included, newest first; an object written before versioning was enabled has the version id "null". ' +
    'The key is URL-encoded in the path (/ as %2F, : as %3A).',
  summary: 'Every version of an object, newest first',
  ...secretKey('Storage', 'storage:read'),
  params: objectParams,
  response: { status: 200, description: 'Versions and delete markers, newest first', schema: versionList },
  async handle({ principal, deps, params }) {
    return { versions: (await listVersions(deps, principal.envId, params.bucket, params.key)).map(versionResource) };
  },
});

export const restoreVersionRoute = defineRoute({
  method: 'post',
  path: `${base}/{bucket}/objects/{key}:restoreVersion`,
  operationId: 'restoreObjectVersion',
  description:
    'Copies the version named by versionId over the latest, as a new version, and answers the key, the version it was restored from and the new version id. ' +
    'A delete marker is 400 invalid_request, an unknown version 404 not_found, a bucket without versioning 409 conflict.',
  example: { versionId: '3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY.MTRCxf3vjVBH40Nr8X8gdRQBpUMLUo' },
  summary: 'Copy a version over the latest, as a new version',
  ...secretKey('Storage', 'storage:write'),
  params: objectParams,
  body: restoreVersionBody,
  response: { status: 200, description: 'The new latest version', schema: writeResult },
  async handle({ principal, deps, params, body }) {
    return restoreVersion(deps, principal.envId, params.bucket, params.key, body.versionId);
  },
});

export const putObjectRoute = defineRoute({
  method: 'put',
  path: `${base}/{bucket}/objects/{key}`,
  operationId: 'putObject',
  description:
    'Stores the request body as the object, keeping its Content-Type; in a versioned bucket it becomes a new version. ' +
    'Objects are at most 5 GiB: a larger Content-Length is refused before a byte is read, and a streamed body that passes it stops with 413 invalid_request and leaves nothing. ' +
    'The key is URL-encoded in the path (/ as %2F).',
  summary: 'Write an object (the body is its content)',
  ...secretKey('Storage', 'storage:write'),
  params: objectParams,
  response: { status: 200, description: 'What was written', schema: writeResult },
  async handle({ principal, deps, params, ctx }) {
    // Refused before a byte is read when Content-Length says too much; counted as it streams otherwise.
    const length = Number(ctx.get('content-length') || 0);
    if (length > maxObjectBytes) throw new AppError('invalid_request', 'objects are at most 5 GiB', { status: 413 });
    return putObject(deps, principal.envId, params.bucket, params.key, ctx.req, ctx.get('content-type') || undefined);
  },
});

export const getObjectRoute = defineRoute({
  method: 'get',
  path: `${base}/{bucket}/objects/{key}`,
  operationId: 'getObject',
  description:
    'Streams the latest content of the object, or of the version named by version_id, with its Content-Type and its version in the Cairn-Version-Id header. ' +
    'A key or version that does not exist is 404 not_found.',
  summary: 'Read the latest object, or ?version_id=',
  ...secretKey('Storage', 'storage:read'),
  params: objectParams,
  query: versionQuery,
  response: { status: 200, description: 'The content', schema: z.unknown().meta({ description: 'the object bytes' }) },
  async handle({ principal, deps, params, query, ctx }) {
    const got = await getObject(deps, principal.envId, params.bucket, params.key, query.version_id);
    ctx.type = got.contentType ?? 'application/octet-stream';
    ctx.length = got.size;
    if (got.versionId) ctx.set('Cairn-Version-Id', got.versionId);
    ctx.body = got.body;
    return undefined;
  },
});

export const deleteObjectRoute = defineRoute({
  method: 'delete',
  path: `${base}/{bucket}/objects/{key}`,
  operationId: 'deleteObject',
  description:
    'Without version_id, deletes the object, which in a versioned bucket leaves a delete marker ({deleteMarker: true, versionId}); with it, deletes that one version for good. ' +
    'A key that does not exist changes nothing and answers 200, as S3 does.',
  summary: 'Delete (a delete marker when versioned), or one version with ?version_id=',
  ...secretKey('Storage', 'storage:write'),
  params: objectParams,
  query: versionQuery,
  response: { status: 200, description: 'What was deleted', schema: writeResult },
  async handle({ principal, deps, params, query }) {
    return deleteObject(deps, principal.envId, params.bucket, params.key, query.version_id);
  },
});

export const storageRoutes = [
  createBucketRoute,
  listBucketsRoute,
  enableVersioningRoute,
  listVersionsRoute,
  restoreVersionRoute,
  putObjectRoute,
  getObjectRoute,
  deleteObjectRoute,
];

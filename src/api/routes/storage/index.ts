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
  summary: 'Create a storage bucket',
  ...secretKey('Storage', 'storage:write'),
  params: envParams,
  body: createBucketBody,
  example: { name: 'avatars' },
  response: { status: 201, description: 'The bucket', schema: bucket },
  async handle({ principal, deps, body }) {
    return bucketResource(await createBucket(deps, principal.envId, body.name), principal.envName);
  },
});

export const listBucketsRoute = defineRoute({
  method: 'get',
  path: base,
  operationId: 'listBuckets',
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
  summary: 'Copy a version over the latest, as a new version',
  ...secretKey('Storage', 'storage:write'),
  params: objectParams,
  body: restoreVersionBody,
  example: { versionId: '3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY.MTRCxf3vjVBH40Nr8X8gdRQBpUMLUo' },
  response: { status: 200, description: 'The new latest version', schema: writeResult },
  async handle({ principal, deps, params, body }) {
    return restoreVersion(deps, principal.envId, params.bucket, params.key, body.versionId);
  },
});

export const putObjectRoute = defineRoute({
  method: 'put',
  path: `${base}/{bucket}/objects/{key}`,
  operationId: 'putObject',
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

// The part of Sentry's web API that `sentry-cli sourcemaps upload` calls (docs/api.md "Sentry
// compatibility", sentry-cli), with SENTRY_URL the service, SENTRY_AUTH_TOKEN a secret key with
// observability:write, SENTRY_ORG and SENTRY_PROJECT the key's org and project. Chunks are kept
// here; a bundle is assembled by a worker (`errors.assemble-bundle`), which the CLI need not wait for.
import { z } from 'zod';
import { requestAssembly } from '../../../domain/errors/sentry/cli/request.ts';
import { chunkUploadOptions, receiveChunks } from '../../../domain/errors/sentry/cli/chunks.ts';
import { parseEnvName } from '../../../domain/tenancy/names.ts';
import { AppError } from '../../../app-error.ts';
import type { Principal } from '../../../http/context.ts';
import { defineRoute } from '../../../http/route.ts';
import { chunkParts } from './chunk-parts.ts';

const orgParams = z.object({ org: z.string().min(1).max(64) });
const sha1 = z.string().regex(/^[0-9a-f]{40}$/, 'a SHA-1 in lower-case hex');

/** The key's org must be the one in the path: sentry-cli's SENTRY_ORG. */
function requireOrg(principal: Principal, org: string): { org: string; project: string } {
  const path = parseEnvName(principal.envName)!;
  if (path.org !== org)
    throw new AppError('forbidden', `this key belongs to the org ${path.org}, not ${org}: set SENTRY_ORG=${path.org}`);
  return path;
}

// The URL sentry-cli posts chunks to, relative: sentry-cli resolves it against SENTRY_URL's
// /api/0/, so it reaches this service however it was addressed, and no Host header is trusted.
const chunkPath = (org: string) => `organizations/${encodeURIComponent(org)}/chunk-upload/`;

const common = {
  tags: ['Sentry compatibility'],
  auth: 'secret',
  scope: 'observability:write',
  params: orgParams,
} as const;

export const chunkUploadOptionsRoute = defineRoute({
  ...common,
  method: 'get',
  path: '/api/0/organizations/{org}/chunk-upload/',
  operationId: 'sentryChunkUploadOptions',
  summary: "sentry-cli's upload parameters: chunk size, request size, concurrency, what it may send",
  response: { status: 200, description: "Sentry's chunk-upload options", schema: z.looseObject({ url: z.string() }) },
  handle({ params, principal }) {
    requireOrg(principal, params.org);
    return chunkUploadOptions(chunkPath(params.org));
  },
});

export const chunkUploadRoute = defineRoute({
  ...common,
  method: 'post',
  path: '/api/0/organizations/{org}/chunk-upload/',
  operationId: 'sentryChunkUpload',
  summary: 'Chunks of an artifact bundle, as multipart parts named by their SHA-1',
  response: { status: 200, description: 'The chunks are kept', schema: z.object({ chunks: z.number().int() }) },
  async handle({ params, principal, deps, ctx }) {
    requireOrg(principal, params.org);
    return { chunks: await receiveChunks(deps, principal.envId, chunkParts(ctx.req)) };
  },
});

const assembleBody = z.looseObject({
  checksum: sha1,
  chunks: z.array(sha1).min(1).max(1000),
  projects: z.array(z.string().max(64)).max(100).default([]),
  version: z.string().max(400).optional(),
  dist: z.string().max(64).optional(),
});

export const assembleRoute = defineRoute({
  ...common,
  method: 'post',
  path: '/api/0/organizations/{org}/artifactbundle/assemble/',
  operationId: 'sentryAssembleArtifactBundle',
  summary: 'Assemble an uploaded artifact bundle into source maps and minified files',
  body: assembleBody,
  example: {
    checksum: '2fd4e1c67a2d28fced849ee1bb76e7391b93eb12',
    chunks: ['2fd4e1c67a2d28fced849ee1bb76e7391b93eb12'],
    projects: ['shop'],
    version: 'shop@1.4.0',
  },
  response: {
    status: 200,
    description: "The bundle's state: not_found (with missingChunks), created, ok or error",
    schema: z.object({
      state: z.enum(['not_found', 'created', 'ok', 'error']),
      missingChunks: z.array(z.string()),
      detail: z.string().nullable(),
    }),
  },
  async handle({ params, body, principal, deps }) {
    const { project } = requireOrg(principal, params.org);
    if (body.projects.length > 0 && !body.projects.includes(project))
      throw new AppError('forbidden', `this key belongs to the project ${project}: set SENTRY_PROJECT=${project}`);
    return requestAssembly(deps, principal.envId, body);
  },
});

export const sentryCliRoutes = [chunkUploadOptionsRoute, chunkUploadRoute, assembleRoute];

// A backup's bytes: the keyed download (decrypted or sealed) and expiring links that need no key.
import type { Context } from 'koa';
import { z } from 'zod';
import { getBackup } from '../../../domain/backups/capture/request.ts';
import {
  defaultLinkSeconds,
  linkValid,
  maxLinkSeconds,
  signDownload,
} from '../../../domain/backups/downloads/download-links.ts';
import { openDecrypted, openSealed } from '../../../domain/backups/downloads/download.ts';
import { keyMayRead } from '../../../domain/backups/downloads/queries.ts';
import { backupQueries, type BackupRow } from '../../../domain/backups/queries.ts';
import { AppError } from '../../../app-error.ts';
import type { AppDeps } from '../../../http/context.ts';
import { defineRoute } from '../../../http/route.ts';
import { backupIdParams } from '../../../contract/backups.ts';
import { onBackup, read } from './parts.ts';

/** The decrypted .sql.gz as the answer, streamed (the keyed download and the link's). */
async function sendDecrypted(ctx: Context, deps: AppDeps, b: BackupRow): Promise<void> {
  const { body, length } = await openDecrypted(deps, b);
  ctx.type = 'application/gzip';
  ctx.attachment(`${b.id}.sql.gz`);
  if (length !== undefined) ctx.length = length;
  ctx.body = body;
}

export const downloadBackup = defineRoute({
  ...onBackup('get', ':download', read, 'downloadBackup'),
  summary: 'The decrypted .sql.gz (application/gzip), streamed; with sealed=true the stored object as it is',
  query: z.object({
    sealed: z.enum(['true', 'false']).optional().meta({
      description:
        'true: the encrypted object (cairn-bk1) and, in the Cairn-Sealed-Key header, its data key sealed by the service key, for `cairn backups decrypt` offline',
    }),
  }),
  response: {
    status: 200,
    description: 'The gzip-compressed SQL dump',
    schema: z.unknown().meta({ description: 'application/gzip bytes' }),
  },
  async handle({ principal, deps, params, query, ctx }) {
    const b = await getBackup(deps.db, principal.envId, params.backup_id);
    if (query.sealed === 'true') {
      const sealed = await openSealed(deps, b);
      ctx.type = 'application/octet-stream';
      ctx.attachment(`${b.id}.cairnbk`);
      ctx.set('cairn-sealed-key', Buffer.from(JSON.stringify(sealed.key)).toString('base64url'));
      if (sealed.length !== undefined) ctx.length = sealed.length;
      ctx.body = sealed.body;
      return undefined;
    }
    await sendDecrypted(ctx, deps, b);
    return undefined;
  },
});

export const backupUrlRoute = defineRoute({
  ...onBackup('post', ':url', read, 'backupUrl'),
  summary: 'An expiring link to the decrypted .sql.gz that needs no key (for curl, CI, another host)',
  body: z
    .strictObject({
      expires_in_seconds: z.number().int().min(60).max(maxLinkSeconds).default(defaultLinkSeconds),
    })
    .optional(),
  example: { expires_in_seconds: 3600 },
  response: {
    status: 200,
    description: 'The link and when it stops working',
    schema: z.object({ url: z.string(), expire_time: z.string() }),
  },
  async handle({ principal, deps, params, body }) {
    const b = await getBackup(deps.db, principal.envId, params.backup_id);
    if (b.state !== 'succeeded')
      throw new AppError('INVALID_STATE', `backup ${b.id} is ${b.state}: only a succeeded backup can be downloaded`, {
        details: { state: b.state },
      });
    const expires = Math.floor(Date.now() / 1000) + (body?.expires_in_seconds ?? defaultLinkSeconds);
    const link = signDownload(deps.config, b.id, expires, principal.keyId);
    const query = new URLSearchParams({ expires: String(link.expires), key: link.key, signature: link.signature });
    return {
      url: `${deps.config.CAIRN_BASE_URL}/v1/backups/${b.id}:signedDownload?${query}`,
      expire_time: new Date(expires * 1000).toISOString(),
    };
  },
});

export const signedDownloadRoute = defineRoute({
  method: 'get',
  path: '/v1/backups/{backup_id}:signedDownload',
  operationId: 'signedDownloadBackup',
  summary: 'The decrypted .sql.gz through a link from :url (no key; the link is the credential)',
  tags: ['Backups'],
  auth: 'none',
  params: backupIdParams,
  query: z.object({ expires: z.coerce.number().int(), key: z.string().max(64), signature: z.string().max(100) }),
  response: {
    status: 200,
    description: 'The gzip-compressed SQL dump',
    schema: z.unknown().meta({ description: 'application/gzip bytes' }),
  },
  async handle({ deps, params, query, ctx }) {
    // Checked before the database is asked anything: a guessed link costs one HMAC.
    const refused = () =>
      new AppError(
        'forbidden',
        'this download link is not valid or has expired; make a new one with cairn backups url <id>',
      );
    if (!linkValid(deps.config, params.backup_id, query)) throw refused();
    const b = await backupQueries(deps.db).backup(params.backup_id);
    if (!b || b.state !== 'succeeded') throw new AppError('not_found', `backup ${params.backup_id} no longer exists`);
    // The key that asked for the link must still be allowed to read this backup.
    if (!(await keyMayRead(deps.db, query.key, b.env_id))) throw refused();
    await sendDecrypted(ctx, deps, b);
    return undefined;
  },
});

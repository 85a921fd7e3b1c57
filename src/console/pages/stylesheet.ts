// GET /console/static/console.<hash>.css: the console's stylesheet (static.ts), public, cached a year.
import { z } from 'zod';
import { AppError } from '../../app-error.ts';
import { defineRoute } from '../../http/route.ts';
import { consolePublicPage } from '../page.ts';
import { stylesheet } from '../static.ts';

export const consoleStylesheet = defineRoute({
  ...consolePublicPage,
  method: 'get',
  path: '/console/static/{file}',
  operationId: 'consoleStylesheet',
  summary: "The console's stylesheet, named by its content hash",
  params: z.object({ file: z.string().max(100) }),
  response: { status: 200, type: 'css', description: 'The stylesheet, cached for a year', schema: z.undefined() },
  handle({ params, ctx }) {
    if (params.file !== stylesheet.file) throw new AppError('not_found', 'There is no such file.');
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.set('ETag', stylesheet.etag);
    ctx.type = 'text/css; charset=utf-8';
    // RFC 9110 §13.1.2: a listed (weak-compared) ETag or `*` means the copy the browser has is current.
    const tags = ctx
      .get('if-none-match')
      .split(',')
      .map((t) => t.trim().replace(/^W\//, ''));
    if (tags.includes(stylesheet.etag) || tags.includes('*')) ctx.status = 304;
    else ctx.body = stylesheet.css;
    return undefined;
  },
});

// A request's parts against its route's schemas (route.ts): what Postgres cannot store is refused
// first (unstorable.ts), then path, query and body are parsed, and every issue is answered at once
// as 400 invalid_request naming its fields.
import type { Context } from 'koa';
import type { z } from 'zod';
import { AppError } from '../app-error.ts';
import { refuseUnstorable } from './unstorable.ts';

type Issue = { field: string; message: string };

/** The schemas of a route's parts, and whether its body is free text stored as sent. */
export interface InputSchemas {
  params?: z.ZodType | undefined;
  query?: z.ZodType | undefined;
  body?: z.ZodType | undefined;
  freeText?: boolean | undefined;
}

function parsePart(schema: z.ZodType | undefined, value: unknown, where: string, issues: Issue[]): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    issues.push({ field: [where, ...issue.path.map(String)].join('.'), message: issue.message });
  }
  return undefined;
}

/**
 * The parsed path, query and body (`withBody`: once it is read), or a 400 naming the fields. A
 * route whose auth needs its path (`client-key`: the DSN's project) checks path and query before
 * it authenticates, so a malformed path is a 400 whatever the key.
 */
export function validateInput(
  def: InputSchemas,
  ctx: Context,
  withBody = true,
): { params: unknown; query: unknown; body: unknown } {
  const rawParams = (ctx as unknown as { params?: Record<string, string> }).params ?? {};
  const rawBody = withBody ? (ctx.request as { body?: unknown }).body : undefined;
  refuseUnstorable({ path: rawParams, query: ctx.query, ...(def.freeText ? {} : { body: rawBody }) });
  const issues: Issue[] = [];
  const params = parsePart(def.params, rawParams, 'path', issues);
  const query = parsePart(def.query, ctx.query, 'query', issues);
  const body = withBody ? parsePart(def.body, rawBody, 'body', issues) : undefined;
  if (issues.length > 0) {
    const summary = issues
      .slice(0, 5)
      .map((i) => `${i.field}: ${i.message}`)
      .join('; ');
    throw new AppError('invalid_request', `invalid request: ${summary}`, { details: { fields: issues.slice(0, 50) } });
  }
  return { params, query, body };
}

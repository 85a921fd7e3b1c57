// The console's lists page as the API's do (http/paginate.ts): one row more than shown tells
// whether another page follows, and the link to it carries the last row's position signed with
// HMAC, under a purpose of the console's own, so a page link is never read as a position it was not.
import { AppError } from '../app-error.ts';
import type { Keyset } from '../contract/pages.ts';
import { paginate, type Page } from '../http/paginate.ts';
import type { AppDeps } from '../http/context.ts';

/** Rows on a page of a console list. */
export const consolePageSize = 50;

/** One page of a list from the position `token` carries (none: the first page), `size` rows. */
export async function pageFrom<Row, P>(
  deps: AppDeps,
  token: string | undefined,
  keyset: Keyset<Row, P>,
  fetch: (after: P | undefined, limit: number) => Promise<Row[]>,
  size = consolePageSize,
): Promise<Page<Row>> {
  try {
    return await paginate(deps.config, { page_size: size, page_token: token }, keyset, fetch);
  } catch (err) {
    // paginate's message names the API's page_token; a page link is said as one.
    if (!(err instanceof AppError) || err.code !== 'invalid_request') throw err;
    throw new AppError('invalid_request', 'This page link is not valid. Start again from the first page.');
  }
}

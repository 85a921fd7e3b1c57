// A list request's filters, search and order as the group list reads them, and what its page
// tokens are bound to: the same filters, the search in its canonical printed form (two spellings of
// one search share their tokens; another search refuses them).
import type { ErrorGroupSort } from '../../../contract/errors.ts';
import type { GroupFilter, GroupState } from '../groups/queries.ts';
import { parseSearch } from './parse.ts';
import { printSearch } from './print.ts';

export interface GroupListQuery {
  q?: string | undefined;
  sort?: ErrorGroupSort | undefined;
  state?: GroupState | undefined;
  service_name?: string | undefined;
  last_seen_after?: string | undefined;
  last_seen_before?: string | undefined;
}

/** The filter listGroups takes, and the value its page tokens bind; invalid_request for a bad `q`. */
export function groupListFilter(query: GroupListQuery): { filter: GroupFilter; sort: ErrorGroupSort; bound: unknown } {
  const terms = parseSearch(query.q ?? '');
  const sort = query.sort ?? 'last_seen';
  const { state, service_name, last_seen_after, last_seen_before } = query;
  const filter: GroupFilter = { terms, sort, state, service_name, last_seen_after, last_seen_before };
  const bound = [
    printSearch(terms),
    state ?? null,
    service_name ?? null,
    last_seen_after ?? null,
    last_seen_before ?? null,
  ];
  return { filter, sort, bound };
}

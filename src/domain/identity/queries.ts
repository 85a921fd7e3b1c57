// Identity's queries, one module per feature (users, sessions, tickets, links, factors, lockout);
// this facade keeps one handle for code that spans them.
import type { Db } from '../../db.ts';
import { factorQueries } from './factors/queries.ts';
import { linkQueries } from './links/queries.ts';
import { lockoutQueries } from './lockout/queries.ts';
import { sessionQueries } from './sessions/queries.ts';
import { ticketQueries } from './tickets/queries.ts';
import { usersQueries } from './users/queries.ts';

export type { EndUserRow, Page, SignInRow } from './users/queries.ts';
export type { SessionRow } from './sessions/queries.ts';
export type { TicketRow } from './tickets/queries.ts';
export type { FactorRow } from './factors/queries.ts';

export function identityQueries(db: Db) {
  return {
    ...usersQueries(db),
    ...sessionQueries(db),
    ...ticketQueries(db),
    ...linkQueries(db),
    ...factorQueries(db),
    ...lockoutQueries(db),
  };
}

export type IdentityQueries = ReturnType<typeof identityQueries>;

// The console's sign-ins (a secret key typed into /console/sign-in, or a link's button) count
// against the per-address limit of every other sign-in (identity/limits.ts: 300 per 5 minutes), on
// Postgres so every web process shares one count. Keys carry ~190 random bits, so guessing one is
// hopeless anyway; the limit keeps one address from making the service look up keys without end.
// The address is the client's as http/client.ts finds it, never a header the client writes.
import type { Knex } from 'knex';
import { consumeOrRefuse } from '../../rate-limits.ts';
import { defaultLimits } from '../identity/limits.ts';

export const consoleSignInLimit = defaultLimits.sign_in;

/** Counts one console sign-in of `ip`; rate_limited with Retry-After past the limit. */
export async function consumeConsoleSignIn(db: Knex, ip: string): Promise<void> {
  await consumeOrRefuse(
    db,
    { table: 'identity_rate_limits', prefix: 'console_sign_in', ...consoleSignInLimit },
    ip,
    1,
    { message: 'too many sign-ins from this address; retry later' },
  );
}

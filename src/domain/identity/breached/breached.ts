// "Is this password known to be breached?", offline first: one interface, two sources
// that both work with no network. The bundled common-password list (zxcvbn-ts's, ~49,000
// passwords) is always on; the local store holds whatever `cairn admin breached import` loaded.
// An environment may also turn on the HIBP range API (hibp.ts), failing open or closed by its own
// explicit choice: open accepts the password when the API is away (Kratos's and Supabase's only
// behaviour), closed answers store_unavailable so the sign-up job retries later and a synchronous
// call gets 503 + Retry-After instead of an unchecked password.
import { dictionary } from '@zxcvbn-ts/language-common';
import type { Db } from '../../../db.ts';
import type { Logger } from '../../../log.ts';
import { hibpClient } from './hibp.ts';
import type { IdentitySettings } from '../settings.ts';
import { containsSuffix, sha1Hex, splitHash } from './format.ts';
import { breachedQueries } from './queries.ts';

export type BreachSource = 'common_list' | 'local_store' | 'hibp_api';

export interface BreachedChecker {
  /** The source that knows the password, or undefined when none does. */
  check(password: string): Promise<BreachSource | undefined>;
}

let common: Set<string> | undefined;

function commonList(): Set<string> {
  common ??= new Set(dictionary['passwords-common'].map((p) => p.toLowerCase()));
  return common;
}

/** The bundled list is lower-case; a capitalised common password is just as guessable. */
export function isCommonPassword(password: string): boolean {
  return commonList().has(password.toLowerCase());
}

export async function inLocalStore(db: Db, password: string): Promise<boolean> {
  const { prefix, suffix } = splitHash(sha1Hex(password));
  const suffixes = await breachedQueries(db).range(prefix);
  return suffixes ? containsSuffix(suffixes, suffix) : false;
}

export function breachedChecker(
  db: Db,
  settings?: Pick<IdentitySettings, 'breached_api'>,
  log?: Logger,
): BreachedChecker {
  return {
    async check(password) {
      if (isCommonPassword(password)) return 'common_list';
      if (await inLocalStore(db, password)) return 'local_store';
      const api = settings?.breached_api;
      if (!api?.enabled) return undefined;
      try {
        return (await hibpClient().contains(sha1Hex(password))) ? 'hibp_api' : undefined;
      } catch (err) {
        if (api.fail === 'closed') throw err;
        log?.warn({ err }, 'breached-password API unavailable; failing open as the environment chose');
        return undefined;
      }
    },
  };
}

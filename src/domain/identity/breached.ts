// "Is this password known to be breached?", offline first (issue #4): one interface, two sources
// that both work with no network. The bundled common-password list (zxcvbn-ts's, ~49,000
// passwords) is always on; the local store holds whatever `cairn admin breached import` loaded.
import { dictionary } from '@zxcvbn-ts/language-common';
import type { Db } from '../../db.ts';
import { containsSuffix, sha1Hex, splitHash } from './breached-format.ts';

export type BreachSource = 'common_list' | 'local_store';

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
  const row = (await db('breached_ranges').where({ prefix }).first('suffixes')) as { suffixes: Buffer } | undefined;
  return row ? containsSuffix(row.suffixes, suffix) : false;
}

export function breachedChecker(db: Db): BreachedChecker {
  return {
    async check(password) {
      if (isCommonPassword(password)) return 'common_list';
      if (await inLocalStore(db, password)) return 'local_store';
      return undefined;
    },
  };
}

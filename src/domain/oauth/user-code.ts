// User codes (RFC 8628 §6.1): eight characters from twenty consonants (no vowels, so no words
// are spelled; no 0/O or 1/I to confuse), shown as XXXX-XXXX: 20^8 ≈ 2^34.6. That is too few
// bits to resist guessing on its own, so wrong entries are rate-limited (§5.1, limits.ts).
import { randomInt } from 'node:crypto';

export const userCodeAlphabet = 'BCDFGHJKLMNPQRSTVWXZ';

/** Eight characters, stored without the dash. */
export function newUserCode(): string {
  let out = '';
  for (let i = 0; i < 8; i++) out += userCodeAlphabet[randomInt(userCodeAlphabet.length)];
  return out;
}

export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * What the user typed, made comparable: case folded, dashes and spaces dropped (§6.1: the server
 * should be lenient with what users type). Answers undefined when it cannot be a code at all.
 */
export function normaliseUserCode(input: string): string | undefined {
  const code = input.toUpperCase().replace(/[\s-]/g, '');
  if (code.length !== 8) return undefined;
  for (const c of code) if (!userCodeAlphabet.includes(c)) return undefined;
  return code;
}

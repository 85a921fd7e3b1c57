// Password rules and hashing. NIST SP 800-63B rev 4 §3.1.1.2: a minimum length (15, or 8 when a
// second factor is required), at least 64 allowed (we take 256), no composition rules, and a check
// against breached passwords (breached.ts). Hashing is argon2id with the OWASP Password Storage
// Cheat Sheet's parameters (m=19456 KiB, t=2, p=1), stored as a PHC string. argon2 runs on libuv's
// thread pool, so a hash never blocks the event loop.
import { randomBytes } from 'node:crypto';
import argon2 from 'argon2';
import { maxPasswordLength } from '../../contract/identity.ts';

export const passwordParams = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export function minPasswordLength(requireSecondFactor: boolean): number {
  return requireSecondFactor ? 8 : 15;
}

/** The reason a password is refused before any hashing, or undefined when it is acceptable. */
export function passwordProblem(password: string, requireSecondFactor: boolean): string | undefined {
  // Length counts code points, not UTF-16 units (NIST: each Unicode code point is one character).
  const length = [...password].length;
  const min = minPasswordLength(requireSecondFactor);
  if (length < min) return `the password must have at least ${min} characters`;
  if (length > maxPasswordLength) return `the password must have at most ${maxPasswordLength} characters`;
  return undefined;
}

/** NIST SP 800-63B rev 4: passwords are Unicode-normalised (NFKC) before hashing. */
function normalise(password: string): string {
  return password.normalize('NFKC');
}

export async function hashPassword(password: string): Promise<string> {
  return argon2.hash(normalise(password), passwordParams);
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, normalise(password));
  } catch {
    // A malformed stored hash is a wrong password, never a 500 that tells the two apart.
    return false;
  }
}

export function needsRehash(hash: string): boolean {
  return argon2.needsRehash(hash, passwordParams);
}

let dummy: Promise<string> | undefined;

/**
 * A hash of a random password with the current parameters. Verifying an unknown identifier (or a
 * user without a password) against it costs the same time as a wrong password for a real user.
 */
export function dummyHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(24).toString('base64'));
  return dummy;
}

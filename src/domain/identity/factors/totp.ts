// TOTP second factor (RFC 6238) with otplib: SHA-1, 6 digits, 30 s steps, one step of drift either
// way (RFC 6238 §5.2 recommends at most one), and a code's step is accepted only once: the last
// accepted step is stored and only later steps pass. The shared secret is sealed with the service
// key, bound to its factor id. Ten recovery codes of 60 bits each, stored as SHA-256 (they are
// random, so a fast hash is enough), each usable once.
import { randomInt } from 'node:crypto';
import type { Knex } from 'knex';
import { generateSecret, generateURI, verify } from 'otplib';
import { keyringFromConfig, open, seal, sha256 } from '../../../crypto.ts';
import type { Config } from '../../../config.ts';
import type { Db } from '../../../db.ts';
import { AppError } from '../../../app-error.ts';
import { newId } from '../../../ids.ts';
import { identifierHash, withCheck } from '../lockout/lockout.ts';
import { factorQueries } from './queries.ts';
import { type EndUserRow } from '../users/queries.ts';
import { endPendingGrants } from '../revocation.ts';

export const totpPeriod = 30;

/** The step a code matches within ±1 step of `nowSeconds` and above `afterStep`, or undefined. */
export async function verifyTotp(
  secret: string,
  code: string,
  nowSeconds: number,
  afterStep?: number,
): Promise<number | undefined> {
  if (!/^\d{6}$/.test(code)) return undefined;
  const result = await verify({
    secret,
    token: code,
    epoch: nowSeconds,
    period: totpPeriod,
    epochTolerance: totpPeriod,
    ...(afterStep !== undefined ? { afterTimeStep: afterStep } : {}),
  });
  return result.valid && 'timeStep' in result ? result.timeStep : undefined;
}

// Crockford's base32 without I, L, O, U: nothing to misread when typed from paper.
const codeAlphabet = '0123456789abcdefghjkmnpqrstvwxyz';

/** `xxxx-xxxx-xxxx`: 12 characters of 5 bits, 60 bits each. */
export function newRecoveryCode(): string {
  let raw = '';
  for (let i = 0; i < 12; i++) raw += codeAlphabet[randomInt(32)];
  return `${raw.slice(0, 4)}-${raw.slice(4, 8)}-${raw.slice(8)}`;
}

export function normaliseRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '');
}

export const hashRecoveryCode = (code: string): Buffer => sha256(`recovery:${normaliseRecoveryCode(code)}`);

const sealContext = (factorId: string): string => `totp:${factorId}`;

export async function enrollTotp(
  db: Db,
  config: Config,
  user: EndUserRow,
  issuer: string,
): Promise<{ secret: string; otpauth_uri: string }> {
  const secret = generateSecret();
  const id = newId('totp');
  const sealed = seal(keyringFromConfig(config), secret, sealContext(id));
  if (!(await factorQueries(db).putPendingFactor({ id, end_user_id: user.id, secret_sealed: sealed }))) {
    throw new AppError('conflict', 'a TOTP factor is already active; disable it first');
  }
  return { secret, otpauth_uri: generateURI({ issuer, label: user.email, secret, period: totpPeriod }) };
}

async function factorSecret(config: Config, factor: { id: string; secret_sealed: string }): Promise<string> {
  return open(keyringFromConfig(config), factor.secret_sealed, sealContext(factor.id)).toString();
}

/** Activates the pending factor with a first code, and answers ten fresh recovery codes once. */
export async function activateTotp(
  db: Knex,
  config: Config,
  user: EndUserRow,
  code: string,
  now: Date = new Date(),
): Promise<string[]> {
  const q = factorQueries(db);
  const factor = await q.factorOf(user.id);
  if (!factor)
    throw new AppError('not_found', 'no TOTP factor is being enrolled; start with POST /v1/client/factors/totp');
  if (factor.activate_time) throw new AppError('conflict', 'the TOTP factor is already active');
  const step = await verifyTotp(await factorSecret(config, factor), code, Math.floor(now.getTime() / 1000));
  if (step === undefined || !(await q.acceptStep(factor.id, step, true))) {
    throw new AppError('invalid_request', 'the code is not valid; check the device clock and try the current code', {
      details: { reason: 'invalid_code' },
    });
  }
  const codes = Array.from({ length: 10 }, newRecoveryCode);
  await db.transaction(async (trx) => {
    await factorQueries(trx).replaceRecoveryCodes(user.id, codes.map(hashRecoveryCode));
    await endPendingGrants(trx, user.id);
  });
  return codes;
}

export interface FactorProof {
  type: 'totp' | 'recovery_code';
  code: string;
}

/** True when one of the proofs is valid for the user's active factor; each proof is spent once. */
export async function checkFactorProofs(
  db: Db,
  config: Config,
  userId: string,
  proofs: readonly FactorProof[],
  now: Date = new Date(),
): Promise<boolean> {
  const q = factorQueries(db);
  for (const proof of proofs.slice(0, 3)) {
    if (proof.type === 'recovery_code') {
      if (await q.useRecoveryCode(userId, hashRecoveryCode(proof.code))) return true;
      continue;
    }
    const factor = await q.factorOf(userId);
    if (!factor?.activate_time) continue;
    const last = factor.last_step === null ? undefined : Number(factor.last_step);
    const step = await verifyTotp(
      await factorSecret(config, factor),
      proof.code,
      Math.floor(now.getTime() / 1000),
      last,
    );
    if (step !== undefined && (await q.acceptStep(factor.id, step, false))) return true;
  }
  return false;
}

/** Turning the factor off needs a current proof, so a stolen session alone cannot remove it. */
export async function disableTotp(db: Db, config: Config, user: EndUserRow, proof: FactorProof): Promise<void> {
  const factor = await factorQueries(db).factorOf(user.id);
  if (!factor?.activate_time) throw new AppError('not_found', 'no active TOTP factor');
  const idHash = identifierHash(user.env_id, user.email_normalized);
  // Guesses here count toward the sign-in lockout: a stolen session must not be a code oracle.
  await withCheck(db, user.env_id, idHash, async (check) => {
    if (!(await checkFactorProofs(db, config, user.id, [proof])))
      return check.fail(new AppError('unauthorized', 'the code is not valid', { details: { reason: 'invalid_code' } }));
    await check.release();
  });
  await removeFactor(db, user.id);
}

/** The operator's way out for a user who lost both the device and the recovery codes. */
export async function resetTotp(db: Db, user: EndUserRow): Promise<void> {
  await removeFactor(db, user.id);
}

/** The factor and its recovery codes go, with what was issued under them (revocation.ts). */
async function removeFactor(db: Db, endUserId: string): Promise<void> {
  await db.transaction(async (trx) => {
    await factorQueries(trx).deleteFactor(endUserId);
    await endPendingGrants(trx, endUserId);
  });
}

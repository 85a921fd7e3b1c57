// Small crypto helpers shared by every area: random tokens, SHA-256 for stored secrets
// (docs/conventions.md "Secrets"), and AES-256-GCM sealing for secrets that must be recovered (docs/api.md:
// CAIRN_ENCRYPTION_KEY wraps stored secrets; CAIRN_ENCRYPTION_KEY_ID names it for rotation).
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createSecretKey,
  hkdfSync,
  randomFillSync,
  randomInt,
  type KeyObject,
} from 'node:crypto';
import { AppError } from './app-error.ts';

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` characters of base62 (5.95 bits each); randomInt avoids modulo bias. */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += base62[randomInt(62)];
  return out;
}

export function sha256(value: string | Buffer): Buffer {
  return createHash('sha256').update(value).digest();
}

export interface Keyring {
  currentId: string;
  keys: ReadonlyMap<string, Buffer>;
}

const derived = new WeakMap<Buffer, Map<string, Buffer>>();

/**
 * A key for one use (`info`, e.g. 'cairn page tokens'), derived from the service's current key with
 * HKDF-SHA-256 (RFC 5869): what it signs a client may hold, and the data-encryption key itself
 * never signs anything. Rotating the service key ends everything signed under the old one.
 */
export function derivedKey(keyring: Keyring, info: string): Buffer {
  const root = keyring.keys.get(keyring.currentId);
  if (!root) throw new Error(`encryption key ${keyring.currentId} is not loaded`);
  let byInfo = derived.get(root);
  if (!byInfo) derived.set(root, (byInfo = new Map()));
  let key = byInfo.get(info);
  if (!key) byInfo.set(info, (key = Buffer.from(hkdfSync('sha256', root, Buffer.alloc(0), info, 32))));
  return key;
}

export function keyringFromConfig(config: {
  CAIRN_ENCRYPTION_KEY_ID: string;
  encryptionKeys: ReadonlyMap<string, Buffer>;
}): Keyring {
  return { currentId: config.CAIRN_ENCRYPTION_KEY_ID, keys: config.encryptionKeys };
}

// Node turns a raw key Buffer into a KeyObject on every createCipheriv call (measured: 3 % of an
// error worker's CPU, which opens one sealed payload per event); each key is converted once.
const keyObjects = new WeakMap<Buffer, KeyObject>();
function keyObject(raw: Buffer): KeyObject {
  let k = keyObjects.get(raw);
  if (!k) {
    k = createSecretKey(raw);
    keyObjects.set(raw, k);
  }
  return k;
}

/**
 * Seals a secret as `v1.<keyId>.<iv>.<ciphertext+tag>` (base64url parts). `context` is bound as
 * additional authenticated data, so a sealed value copied to another row or purpose fails to open.
 */
/**
 * The CSPRNG drawn 4 KiB at a time, for the hot paths that want a few bytes each: ULIDs (ids.ts)
 * and GCM nonces. A call per value was 4-7% of a web process's CPU under captures (bench/errors.ts).
 * No byte of the pool is handed out twice.
 */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/** `n` (≤ 4096) fresh random bytes, copied out of the pool. */
export function randomPoolBytes(n: number): Buffer {
  if (poolAt + n > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  poolAt += n;
  return Buffer.from(pool.subarray(poolAt - n, poolAt));
}

/** One fresh random byte (0-255) from the pool. */
export function randomPoolByte(): number {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  return pool[poolAt++]!;
}

// Random 96-bit GCM nonces (NIST SP 800-38D §8.2.2).
const nonce = () => randomPoolBytes(12);

export function seal(keyring: Keyring, plaintext: string | Buffer, context: string): string {
  const key = keyring.keys.get(keyring.currentId);
  if (!key) throw new Error(`encryption key ${keyring.currentId} is not loaded`);
  const iv = nonce();
  const cipher = createCipheriv('aes-256-gcm', keyObject(key), iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return ['v1', keyring.currentId, iv.toString('base64url'), body.toString('base64url')].join('.');
}

export function open(keyring: Keyring, sealed: string, context: string): Buffer {
  const [version, keyId, iv, body] = sealed.split('.');
  const key = keyId ? keyring.keys.get(keyId) : undefined;
  if (version !== 'v1' || !key || !iv || !body) {
    throw new AppError(
      'internal',
      `sealed value uses unknown key ${keyId ?? '?'}: add it to CAIRN_ENCRYPTION_OLD_KEYS`,
    );
  }
  const data = Buffer.from(body, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', keyObject(key), Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(data.subarray(data.length - 16));
  return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]);
}

// The service keyring's variables (CAIRN_ENCRYPTION_KEY, CAIRN_ENCRYPTION_OLD_KEYS) and the error
// that names a bad variable. Kept apart from config.ts's schema so the published CLI's offline
// `backups decrypt` reads keys exactly as the service does, without zod.

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Cairn cannot start; fix these environment variables:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

/**
 * A 32-byte key as base64 (`openssl rand -base64 32`) or as 64 hex characters (`openssl rand -hex
 * 32`, and what Heroku's app.json `"generator": "secret"` makes). Base64 of 32 bytes is 44
 * characters, so the two never mix up.
 */
export function keyBytes(v: string): Buffer {
  return /^[0-9a-fA-F]{64}$/.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
}

/**
 * The service keyring by id: the current key, then the older ones of CAIRN_ENCRYPTION_OLD_KEYS
 * ("id:key,…"), still read during a rotation. Throws ConfigError naming what is wrong.
 */
export function encryptionKeys(currentId: string, current: string, old?: string): Map<string, Buffer> {
  const keys = new Map<string, Buffer>();
  const add = (id: string, value: string, variable: string) => {
    const key = keyBytes(value);
    if (!id || key.length !== 32)
      throw new ConfigError([
        `${variable} must be 32 bytes, as base64 or 64 hex characters${variable.endsWith('OLD_KEYS') ? ', in "id:key,…"' : ''}`,
      ]);
    if (!keys.has(id)) keys.set(id, key);
  };
  add(currentId, current, 'CAIRN_ENCRYPTION_KEY');
  for (const pair of old?.split(',').filter(Boolean) ?? []) {
    const [id, value] = pair.split(':');
    add(id ?? '', value ?? '', 'CAIRN_ENCRYPTION_OLD_KEYS');
  }
  return keys;
}

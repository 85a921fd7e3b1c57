// The service keyring for offline commands (`cairn backups decrypt`), from the same variables the
// service runs with, or from `.data/cairn.env` where `npm start` kept its key. Nothing else is
// read: no database, no API.
import { keyBytes } from '../config.ts';
import type { Keyring } from '../crypto.ts';
import { embeddedEnv } from './context.ts';
import { CliError } from './errors.ts';

export function keyringFromEnv(env: Record<string, string | undefined>): Keyring {
  const vars = env.CAIRN_ENCRYPTION_KEY ? env : { ...embeddedEnv(), ...env };
  const current = vars.CAIRN_ENCRYPTION_KEY;
  if (!current)
    throw new CliError("set CAIRN_ENCRYPTION_KEY (the key the service runs with; it sealed the backup's data key)");
  const keys = new Map<string, Buffer>();
  const add = (id: string, value: string) => {
    const key = keyBytes(value);
    if (key.length !== 32) throw new CliError(`the encryption key ${id} is not 32 bytes (base64 or 64 hex characters)`);
    keys.set(id, key);
  };
  const currentId = vars.CAIRN_ENCRYPTION_KEY_ID ?? 'k1';
  add(currentId, current);
  for (const pair of vars.CAIRN_ENCRYPTION_OLD_KEYS?.split(',').filter(Boolean) ?? []) {
    const [id, value] = pair.split(':');
    if (id && value && !keys.has(id)) add(id, value);
  }
  return { currentId, keys };
}

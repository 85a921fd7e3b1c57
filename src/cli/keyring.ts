// The service keyring for offline commands (`cairn backups decrypt`), from the same variables the
// service runs with, or from `.data/cairn.env` where `npm start` kept its key. Nothing else is
// read: no database, no API.
import { ConfigError, encryptionKeys } from '../config-keys.ts';
import type { Keyring } from '../crypto.ts';
import { embeddedEnv } from './context.ts';
import { CliError } from './errors.ts';

export function keyringFromEnv(env: Record<string, string | undefined>): Keyring {
  const vars = env.CAIRN_ENCRYPTION_KEY ? env : { ...embeddedEnv(), ...env };
  const current = vars.CAIRN_ENCRYPTION_KEY;
  if (!current)
    throw new CliError("set CAIRN_ENCRYPTION_KEY (the key the service runs with; it sealed the backup's data key)");
  const currentId = vars.CAIRN_ENCRYPTION_KEY_ID ?? 'k1';
  try {
    return { currentId, keys: encryptionKeys(currentId, current, vars.CAIRN_ENCRYPTION_OLD_KEYS) };
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.problems.join('; '));
    throw err;
  }
}

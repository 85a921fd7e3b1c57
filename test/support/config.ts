// A Config for tests: the real services from the environment (scripts/test.ts provisions them),
// a fixed test encryption key, and the given database.
import { loadConfig, type Config } from '../../src/config.ts';
import { keyringFromConfig, type Keyring } from '../../src/crypto.ts';

export const testEncryptionKey = Buffer.alloc(32, 7).toString('base64');

export function testConfig(databaseUrl: string, overrides: Record<string, string> = {}): Config {
  return loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    CAIRN_ENCRYPTION_KEY: testEncryptionKey,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    ...overrides,
  });
}

/** The keyring of `testConfig`: what the web and worker of a test seal and open with. */
let keyring: Keyring | undefined;
/** The service key of every test config (testEncryptionKey), made once. */
export const testKeyring = (): Keyring =>
  (keyring ??= keyringFromConfig(testConfig('postgres://unused@127.0.0.1/unused')));

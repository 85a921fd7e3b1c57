// Configuration comes only from the environment (twelve-factor, as on Heroku) and is parsed once.
// A bad or missing variable stops start-up with one message that names every problem and its fix.
import { z } from 'zod';
import { ConfigError, encryptionKeys, keyBytes } from './config-keys.ts';

export { ConfigError, encryptionKeys, keyBytes };

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const base64Key = z.string().refine((v) => keyBytes(v).length === 32, {
  message: 'must be 32 random bytes, as base64 or 64 hex characters',
});

const schema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000), // 0: any free port
  // Web processes per dyno sharing PORT (node:cluster), as Heroku's Node.js runtime sizes it.
  WEB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
  CAIRN_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  CAIRN_ENCRYPTION_KEY: base64Key,
  CAIRN_ENCRYPTION_KEY_ID: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/)
    .default('k1'),
  // Older keys stay readable during rotation: "id1:base64,id2:base64".
  CAIRN_ENCRYPTION_OLD_KEYS: z.string().optional(),
  AWS_ENDPOINT_URL_S3: z.url().optional(),
  AWS_REGION: z.string().min(1).default('us-east-1'),
  AWS_ACCESS_KEY_ID: z.string().optional(),
  AWS_SECRET_ACCESS_KEY: z.string().optional(),
  CAIRN_S3_FORCE_PATH_STYLE: bool.default(false),
  CAIRN_BACKUP_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{2,62}$/)
    .default('cairn-backups'),
  CAIRN_STORAGE_BUCKET_PREFIX: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{0,30}$/)
    .default('cairn-storage-'),
  // Set by `npm start` when no object store is configured: objects live on the local disk.
  CAIRN_LOCAL_OBJECT_DIR: z.string().optional(),
  SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  CAIRN_MAIL_FROM: z.string().default('Cairn <no-reply@localhost>'),
  CAIRN_GOOGLE_CLIENT_ID: z.string().optional(),
  CAIRN_GOOGLE_CLIENT_SECRET: z.string().optional(),
  // Where the shared Google client's issuer lives; only tests point it elsewhere.
  CAIRN_GOOGLE_ISSUER: z.url({ protocol: /^https?$/ }).default('https://accounts.google.com'),
  CAIRN_CELL: z
    .string()
    .regex(/^[a-z0-9]{2}$/, 'must be two characters a-z or 0-9')
    .default('c0'),
  // Proxies in front of web that append the client's address to X-Forwarded-For; unset, 1 on a
  // Heroku dyno and 0 elsewhere (proxyHopsDefault).
  CAIRN_TRUSTED_PROXY_HOPS: z.coerce.number().int().min(0).max(10),
  // Bearer token of GET /metrics; unset, the route answers 404.
  CAIRN_METRICS_TOKEN: z.string().min(16, 'use at least 16 random characters, e.g. `openssl rand -hex 24`').optional(),
  // The most connections one process opens to Cairn's database, all its pools together (db.ts
  // `connectionShares`). Unset: 3 for web and 7 for worker, so 2 web + 2 worker fit the 20
  // connections of Heroku's smaller Postgres plans.
  CAIRN_DB_MAX_CONNECTIONS: z.coerce.number().int().min(4).max(500).optional(),
  // Replaced by CAIRN_DB_MAX_CONNECTIONS; refused so that a deploy never silently ignores it.
  CAIRN_DB_POOL_MAX: z
    .never({
      error:
        'was replaced by CAIRN_DB_MAX_CONNECTIONS, the connections of a whole process (all pools): set that instead',
    })
    .optional(),
  // Whether test environments may aim webhooks and social providers at private addresses
  // (loopback, RFC 1918, link-local, metadata): unset, `deny` under NODE_ENV=production, else
  // `allow` (egress/target-rule.ts). Live environments never may.
  CAIRN_PRIVATE_TARGETS: z.enum(['allow', 'deny']).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

const hints: Record<string, string> = {
  DATABASE_URL:
    'set it to a Postgres URL, e.g. postgres://user:pass@host:5432/db (or run `npm start` with nothing set for an embedded database)',
  CAIRN_ENCRYPTION_KEY:
    'generate one with `openssl rand -base64 32` and keep it safe: it decrypts backups and stored secrets',
  CAIRN_BASE_URL: 'set it to the public https URL of the web process, e.g. https://auth.example.com',
  CAIRN_CELL: 'use two characters from a-z and 0-9, e.g. c0',
  CAIRN_PRIVATE_TARGETS:
    'allow (test environments may call localhost and private networks: development) or deny (public addresses only)',
};

export type Config = Readonly<
  Omit<z.infer<typeof schema>, 'CAIRN_BASE_URL' | 'CAIRN_ENCRYPTION_OLD_KEYS'> & {
    CAIRN_BASE_URL: string;
    encryptionKeys: ReadonlyMap<string, Buffer>;
  }
>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse({ CAIRN_TRUSTED_PROXY_HOPS: proxyHopsDefault(cleaned), ...cleaned });
  const problems: string[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const name = String(issue.path[0]);
      const what = issue.code === 'invalid_type' && cleaned[name] === undefined ? 'is missing' : issue.message;
      problems.push(`${name} ${what}${hints[name] ? `: ${hints[name]}` : ''}`);
    }
    throw new ConfigError(problems);
  }
  const c = parsed.data;
  const keys = encryptionKeys(c.CAIRN_ENCRYPTION_KEY_ID, c.CAIRN_ENCRYPTION_KEY, c.CAIRN_ENCRYPTION_OLD_KEYS);
  const { CAIRN_ENCRYPTION_OLD_KEYS: _old, ...rest } = c;
  return Object.freeze({
    ...rest,
    CAIRN_BASE_URL: (c.CAIRN_BASE_URL ?? `http://localhost:${c.PORT}`).replace(/\/$/, ''),
    encryptionKeys: keys,
  });
}

/**
 * How many proxies to trust when CAIRN_TRUSTED_PROXY_HOPS is unset. Trusting a proxy that is not
 * there lets every client write its own address (X-Forwarded-For) and so reset every per-address
 * limit, so the default is 0, except on Heroku: its router is in front of every web dyno and
 * appends the client's address, and Heroku sets DYNO on every dyno, which no client can write
 * (https://devcenter.heroku.com/articles/dynos#local-environment-variables). Without this, an app
 * deployed without app.json would see the router's address for every client, all in one bucket.
 */
function proxyHopsDefault(env: Record<string, string | undefined>): string {
  return env.DYNO ? '1' : '0';
}

/** For entry points: print the problems and exit(1) instead of a stack trace. */
export function loadConfigOrExit(env: Record<string, string | undefined> = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

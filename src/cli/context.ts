// What every CLI command can reach. API commands use the SDK with CAIRN_API_URL and
// CAIRN_SECRET_KEY; `cairn admin …` commands are for the operator and talk to the database, so
// only the service's own `cairn` has them (admin-context.ts); the published CLI has the rest.
import type { Command } from 'commander';
import type { Knex } from 'knex';
import { existsSync, readFileSync } from 'node:fs';
import type { Config } from '../config.ts';
import type { Keyring } from '../crypto.ts';
import { CairnClient } from '../sdk/client.ts';
import { CliError, type DbSource } from './errors.ts';

export { CliError, describeError } from './errors.ts';

/** Sent in the User-Agent; the published package's build checks it against its version. */
export const cliVersion = '0.1.0';

export interface CliContext {
  /** The SDK client from CAIRN_API_URL and CAIRN_SECRET_KEY; a clear error when they are unset. */
  client(): CairnClient;
  /** The environment name to use: --env, else CAIRN_ENV. */
  envName(flag?: string): string;
  /** Config and a database handle for admin commands; closed when the command ends. */
  admin(): Promise<{ config: Config; db: Knex; keyring(): Keyring }>;
  /** Prints JSON with --json, else the human form. */
  print(value: unknown, json: boolean, human?: (value: never) => string): void;
  /** Writes progress lines to stderr (never stdout, so --json output stays clean). */
  progress(message: string): void;
  /** Where the admin commands' database setting came from, once one was asked for. */
  dbSource(): DbSource | undefined;
}

export function createApiContext(env: Record<string, string | undefined> = process.env): CliContext {
  return {
    client() {
      const baseUrl = env.CAIRN_API_URL;
      const secretKey = env.CAIRN_SECRET_KEY;
      if (!baseUrl || !secretKey) {
        throw new CliError(
          'set CAIRN_API_URL (e.g. http://localhost:3000) and CAIRN_SECRET_KEY (a cairn_sk_… key) to call the API',
        );
      }
      return new CairnClient({
        baseUrl,
        secretKey,
        publishableKey: env.CAIRN_PUBLISHABLE_KEY,
        userAgent: `cairn-cli/${cliVersion}`,
      });
    },
    envName(flag) {
      const name = flag ?? env.CAIRN_ENV;
      if (!name)
        throw new CliError(
          'name the environment with --env orgs/{org}/projects/{project}/envs/{env} (or set CAIRN_ENV)',
        );
      return name;
    },
    admin() {
      // The installed CLI has no database driver: the operator's commands belong to the service.
      return Promise.reject(
        new CliError(
          "`cairn admin` commands talk to the service's database: run them in its folder (npx cairn admin …)",
        ),
      );
    },
    print(value, json, human) {
      process.stdout.write(`${json || !human ? JSON.stringify(value, null, json ? 2 : 0) : human(value as never)}\n`);
    },
    progress(message) {
      process.stderr.write(`${message}\n`);
    },
    dbSource: () => undefined,
  };
}

/** The settings `npm start` wrote for its embedded database, if it ran here. */
export const embeddedEnvFile = '.data/cairn.env';

export function embeddedEnv(): Record<string, string> {
  if (!existsSync(embeddedEnvFile)) return {};
  const out: Record<string, string> = {};
  for (const line of readFileSync(embeddedEnvFile, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

export type Register = (program: Command, ctx: CliContext) => void;

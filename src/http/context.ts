// What every request handler can reach: the process's dependencies and the request's own state.
import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import type { Jobs } from '../jobs/index.ts';
import type { Logger } from '../log.ts';
import type { ObjectStore } from '../storage/object-store.ts';

export interface AppDeps {
  config: Config;
  db: Knex;
  jobs: Jobs;
  log: Logger;
  store: ObjectStore;
}

/** The caller, as the key middleware resolved it. */
export interface Principal {
  keyId: string;
  /** 'session': an end user's session bearer (identity); keyId is then the session id. */
  kind: 'publishable' | 'secret' | 'session';
  envId: string;
  envName: string;
  scopes: readonly string[];
  /** Set for kind 'session': whose session it is. */
  endUserId?: string;
}

/** An end user's session: whose it is is always known. */
export interface SessionPrincipal extends Principal {
  kind: 'session';
  endUserId: string;
}

/**
 * A Sentry client key (`auth: 'client-key'`), as KernelHooks.clientKey resolved it: live, and of
 * the project the path names.
 */
export interface ClientKeyPrincipal {
  keyId: string;
  envId: string;
  /** The DSN's project number (the environment's). */
  projectNumber: string;
  /** The key's own rate limit, when it has one. */
  rateLimit: { count: number; windowSeconds: number } | undefined;
}

/**
 * What an `auth: 'client-key'` handler gets. The key a request carries (query or header) is
 * checked before the body is read; a route declared `keyFrom: 'request-or-body'` also takes one
 * its body names (a Sentry envelope's `dsn` header), which only the handler can read: it calls
 * `resolve` with it, and the same hook checks it with the same answers.
 */
export interface ClientKeyAuth {
  /** The request's key, checked; undefined only on a `request-or-body` route whose request carried none. */
  key: ClientKeyPrincipal | undefined;
  /** `key` when the request carried one, else the body's key (undefined: none, 401) checked. */
  resolve(fromBody?: string): Promise<ClientKeyPrincipal>;
}

export interface RequestState {
  requestId: string;
  log: Logger;
  principal?: Principal;
}

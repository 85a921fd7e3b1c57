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

export interface RequestState {
  requestId: string;
  log: Logger;
  principal?: Principal;
}

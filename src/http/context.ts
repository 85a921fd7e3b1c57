// What every request handler can reach: the process's dependencies and the request's own state.
import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import type { Jobs } from '../jobs.ts';
import type { Logger } from '../log.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import type { Scope, KeyKind } from '../domain/tenancy/keys.ts';

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
  kind: KeyKind | 'session';
  envId: string;
  envName: string;
  scopes: readonly Scope[];
  /** Set for kind 'session': whose session it is. */
  endUserId?: string;
}

export interface RequestState {
  requestId: string;
  log: Logger;
  principal?: Principal;
}

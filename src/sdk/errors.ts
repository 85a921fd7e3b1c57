// Error tracking (docs/api.md "Error tracking"), for applications and the CLI: capture, reads,
// triage with etags, source maps and the scrubbing policy. Environment names go through envPath.
import { CairnConnectionError, envPath, type CairnClient } from './client.ts';

import type { ErrorGroupSort, ErrorSettingsResource, ScrubbingPolicy } from '../contract/errors.ts';
import type {
  BatchResult,
  BatchTriageAction,
  BatchTriageResult,
  CaptureEvent,
  ErrorEvent,
  ErrorGroup,
  ErrorGroupState,
  LinkedException,
  ReleaseFile,
  StackFrame,
} from '../contract/errors.ts';

export type {
  BatchResult,
  BatchTriageAction,
  BatchTriageResult,
  CaptureEvent,
  ErrorEvent,
  ErrorGroup,
  ErrorGroupSort,
  ErrorGroupState,
  ErrorSettingsResource,
  LinkedException,
  ScrubbingPolicy,
  StackFrame,
};
/** A source map or a minified file of a release. */
export type SourceMap = ReleaseFile;

/**
 * A release's files, by their collection in the path: source maps, and minified files (for function
 * names when a map has no sourcesContent). Each is uploaded as `{file, <field>}`, the field named here.
 */
const contentField = { source_maps: 'source_map', minified_sources: 'source' } as const;
export type ReleaseFileKind = keyof typeof contentField;

/** A page of a release's files of one kind: `{source_maps: […]}` or `{minified_sources: […]}`. */
export type ReleaseFilePage<K extends ReleaseFileKind> = { [C in K]: SourceMap[] } & { next_page_token?: string };

export interface Page {
  pageSize?: number;
  pageToken?: string;
}

export interface GroupFilter extends Page {
  /** A search (docs/api.md "Search"), passed as it is: `is:unresolved release:1.2.0 browser:Chrome`. */
  q?: string;
  /** last_seen (default), first_seen, events or users. */
  sort?: ErrorGroupSort;
  state?: ErrorGroupState;
  serviceName?: string;
  lastSeenAfter?: string;
  lastSeenBefore?: string;
}

const seg = encodeURIComponent;

/** 32 random lower-case hex characters (Web Crypto: Node and browsers alike). */
function newEventId(): string {
  return Array.from(globalThis.crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join(
    '',
  );
}

const named = (event: CaptureEvent): CaptureEvent => (event.event_id ? event : { ...event, event_id: newEventId() });

/** The client throws CairnConnectionError when no answer came: connection refused, reset, or cut. Other failures are answers. */
async function retryOnConnectionError<T>(
  send: () => Promise<T>,
  delaysMs: readonly number[] = [200, 1000, 3000],
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (!(err instanceof CairnConnectionError) || attempt >= delaysMs.length) throw err;
      await new Promise((r) => setTimeout(r, delaysMs[attempt]));
    }
  }
}

export class ErrorGroupsApi {
  readonly client: CairnClient;

  constructor(client: CairnClient) {
    this.client = client;
  }

  private groups(env: string): string {
    return `${envPath(env)}/error_groups`;
  }

  /**
   * Captures one event. It is named (`event_id`) before it is sent, and sent again, under the same
   * name, when the connection fails: the request may have been accepted before the answer was lost,
   * and the service stores a named event once (docs/api.md "Idempotent capture").
   */
  capture(env: string, event: CaptureEvent): Promise<{ uid: string }> {
    const body = { error_event: named(event) };
    return retryOnConnectionError(() => this.client.request('POST', `${this.groups(env)}:capture`, { body }));
  }

  batchCapture(env: string, events: CaptureEvent[]): Promise<{ results: BatchResult[] }> {
    const body = { error_events: events.map(named) };
    return retryOnConnectionError(() => this.client.request('POST', `${this.groups(env)}:batchCapture`, { body }));
  }

  list(env: string, f: GroupFilter = {}): Promise<{ error_groups: ErrorGroup[]; next_page_token?: string }> {
    return this.client.request('GET', this.groups(env), {
      query: {
        q: f.q,
        sort: f.sort,
        state: f.state,
        service_name: f.serviceName,
        last_seen_after: f.lastSeenAfter,
        last_seen_before: f.lastSeenBefore,
        page_size: f.pageSize,
        page_token: f.pageToken,
      },
    });
  }

  get(env: string, id: string): Promise<ErrorGroup> {
    return this.client.request('GET', `${this.groups(env)}/${seg(id)}`);
  }

  /** acknowledge, resolve or reopen, with the etag read from the group. */
  triage(env: string, id: string, action: 'acknowledge' | 'resolve' | 'reopen', etag: string): Promise<ErrorGroup> {
    return this.client.request('POST', `${this.groups(env)}/${seg(id)}:${action}`, { body: { etag } });
  }

  acknowledge(env: string, id: string, etag: string): Promise<ErrorGroup> {
    return this.triage(env, id, 'acknowledge', etag);
  }

  resolve(env: string, id: string, etag: string): Promise<ErrorGroup> {
    return this.triage(env, id, 'resolve', etag);
  }

  reopen(env: string, id: string, etag: string): Promise<ErrorGroup> {
    return this.triage(env, id, 'reopen', etag);
  }

  /**
   * One triage call over up to 100 groups (`name`: an id or a resource name, with the etag read
   * from it). Each result, in the order sent, is the changed group or `{error: {code, message}}`:
   * ETAG_MISMATCH (changed since read: left as it is), INVALID_STATE or not_found.
   */
  batchUpdate(
    env: string,
    action: BatchTriageAction,
    groups: { name: string; etag: string }[],
  ): Promise<{ results: BatchTriageResult[] }> {
    return this.client.request('POST', `${this.groups(env)}:batchUpdate`, { body: { groups, action } });
  }

  listEvents(
    env: string,
    groupId: string,
    p: Page = {},
  ): Promise<{ error_events: ErrorEvent[]; next_page_token?: string }> {
    return this.client.request('GET', `${this.groups(env)}/${seg(groupId)}/error_events`, {
      query: { page_size: p.pageSize, page_token: p.pageToken },
    });
  }

  /** `groupId` `-` reads an event by uid alone (404 until the worker has stored it). */
  getEvent(env: string, uid: string, groupId = '-'): Promise<ErrorEvent> {
    return this.client.request('GET', `${this.groups(env)}/${seg(groupId)}/error_events/${seg(uid)}`);
  }

  /** Uploads one file of a release: a source map (parsed JSON) or the text of a minified file. */
  uploadReleaseFile(
    env: string,
    kind: ReleaseFileKind,
    release: string,
    file: string,
    content: unknown,
  ): Promise<SourceMap> {
    return this.client.request('PUT', `${envPath(env)}/releases/${seg(release)}/${kind}`, {
      body: { file, [contentField[kind]]: content },
    });
  }

  listReleaseFiles<K extends ReleaseFileKind>(
    env: string,
    kind: K,
    release: string,
    p: Page = {},
  ): Promise<ReleaseFilePage<K>> {
    return this.client.request('GET', `${envPath(env)}/releases/${seg(release)}/${kind}`, {
      query: { page_size: p.pageSize, page_token: p.pageToken },
    });
  }

  uploadSourceMap(env: string, release: string, file: string, sourceMap: unknown): Promise<SourceMap> {
    return this.uploadReleaseFile(env, 'source_maps', release, file, sourceMap);
  }

  listSourceMaps(env: string, release: string, p: Page = {}): Promise<ReleaseFilePage<'source_maps'>> {
    return this.listReleaseFiles(env, 'source_maps', release, p);
  }

  /** The text of a minified file: names frames by the function around them when its map has no sourcesContent. */
  uploadMinifiedSource(env: string, release: string, file: string, source: string): Promise<SourceMap> {
    return this.uploadReleaseFile(env, 'minified_sources', release, file, source);
  }

  listMinifiedSources(env: string, release: string, p: Page = {}): Promise<ReleaseFilePage<'minified_sources'>> {
    return this.listReleaseFiles(env, 'minified_sources', release, p);
  }

  getScrubbingPolicy(
    env: string,
  ): Promise<{ name: string; policy: ScrubbingPolicy; default_rules: string[]; update_time?: string }> {
    return this.client.request('GET', `${envPath(env)}/scrubbing_policy`);
  }

  putScrubbingPolicy(
    env: string,
    policy: Partial<ScrubbingPolicy>,
  ): Promise<{ name: string; policy: ScrubbingPolicy; default_rules: string[]; update_time?: string }> {
    return this.client.request('PUT', `${envPath(env)}/scrubbing_policy`, { body: { policy } });
  }

  /** How long events are kept (retention_days) and how many may wait unprocessed (max_pending). */
  getSettings(env: string): Promise<ErrorSettingsResource> {
    return this.client.request('GET', `${envPath(env)}/error_settings`);
  }

  putSettings(
    env: string,
    settings: { retention_days?: number; max_pending?: number },
  ): Promise<ErrorSettingsResource> {
    return this.client.request('PUT', `${envPath(env)}/error_settings`, { body: settings });
  }
}

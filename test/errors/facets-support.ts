// Reading a group's facets as the store keeps them, and making events that carry them, for the
// facets tests (facets-store.test.ts, facets-backfill.test.ts).
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Keyring } from '../../src/crypto.ts';
import type { ErrorEventInput } from '../../src/contract/error-capture.ts';
import { newEventUid } from '../../src/domain/errors/intake/capture.ts';
import type { JobEvent } from '../../src/domain/errors/intake/ingest.ts';
import { sealPayload } from '../../src/domain/errors/intake/sealed-payload.ts';
import { fromSentryEvent } from '../../src/domain/errors/sentry/event.ts';

export interface GroupFacets {
  tags: Record<string, number>;
  users: Record<string, number>;
  user_count: number;
  first_release: string;
}

/** Each group of the environment whose title has `type`, by its facets: `key=value` → count, user key → count. */
export async function facetsOfGroups(db: Knex, envId: string, type: string): Promise<GroupFacets[]> {
  const groups = (await db('error_groups')
    .where({ env_id: envId })
    .whereLike('title', `${type}%`)
    .orderBy('first_seen_time')
    .select('id', 'user_count', 'first_release')) as { id: string; user_count: number; first_release: string }[];
  const out: GroupFacets[] = [];
  for (const g of groups) {
    const tags = (await db('error_group_tags').where({ group_id: g.id }).select('key', 'value', 'count')) as {
      key: string;
      value: string;
      count: string;
    }[];
    const users = (await db('error_group_users').where({ group_id: g.id }).select('user_key', 'count')) as {
      user_key: string;
      count: string;
    }[];
    out.push({
      tags: Object.fromEntries(tags.map((t) => [`${t.key}=${t.value}`, Number(t.count)])),
      users: Object.fromEntries(users.map((u) => [u.user_key, Number(u.count)])),
      user_count: g.user_count,
      first_release: g.first_release,
    });
  }
  return out;
}

/** One group's facets (the test's events make exactly one of `type`). */
export async function facetsOfGroup(db: Knex, envId: string, type: string): Promise<GroupFacets> {
  const all = await facetsOfGroups(db, envId, type);
  if (all.length !== 1) throw new Error(`expected one group of ${type}, found ${all.length}`);
  return all[0]!;
}

/** A Sentry SDK's event (JSON as it is posted), with an id of its own unless given. */
export function sdkEvent(type: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_id: randomUUID().replace(/-/g, ''),
    timestamp: Date.now() / 1000,
    platform: 'javascript',
    exception: {
      values: [{ type, value: 'boom', stacktrace: { frames: [{ filename: 'app.js', function: 'run', lineno: 1 }] } }],
    },
    ...extra,
  };
}

/** The event as a job's fetch hands it to the store step: sealed as the Sentry routes seal it. */
export function fetchedSdkEvent(keyring: Keyring, envId: string, event: Record<string, unknown>): JobEvent {
  const input = fromSentryEvent(event, new Date());
  const row = sealPayload(keyring, envId, newEventUid('c0'), input as unknown as ErrorEventInput);
  return { ...row, job: 'j', receive_time: new Date(), lastAttempt: false };
}

/** `n` counted: what a list of `key=value` (or user keys) adds up to. */
export function tally(keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (out[k] ?? 0) + 1;
  return out;
}

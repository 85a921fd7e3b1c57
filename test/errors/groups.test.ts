// Reads and triage over HTTP: lists newest first with filters and signed page tokens, the state
// table with etags (ETAG_MISMATCH and INVALID_STATE change nothing), concurrent triage with one
// etag (exactly one wins), reopen by a new occurrence but not by a late one (sentry#30371).
import { beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { call, createTestEnv } from '../support/harness.ts';
import { capture, envBase, groupIdOf, readStored, sampleEvent, useStack } from './support.ts';

interface Group {
  name: string;
  uid: string;
  state: string;
  etag: string;
  occurrence_count: number;
  last_release: string;
  last_seen_time: string;
}

const t = useStack();
let other: CreatedEnv;
let groupA: string;
let groupB: string;

const get = <T = Record<string, unknown>>(path: string, key = t.env.secretKey) =>
  call<T>(t.s.web.url, 'GET', `${envBase(t.env)}${path}`, { key });
const post = <T = Record<string, unknown>>(path: string, body: unknown, headers: Record<string, string> = {}) =>
  call<T>(t.s.web.url, 'POST', `${envBase(t.env)}${path}`, { key: t.env.secretKey, body, headers });
const group = async (id: string) => (await get<Group>(`/error_groups/${id}`)).body;

/** Captures and waits until stored; answers the group id. */
async function occur(event: Record<string, unknown>): Promise<string> {
  const uid = await capture(t.s.web, t.env, event);
  return groupIdOf((await readStored(t.s.web, t.env, uid)).body.name);
}

beforeAll(async () => {
  other = await createTestEnv(t.h.db);
  groupA = await occur(sampleEvent({ event_time: '2026-11-01T10:00:00Z', release: 'r1', service_name: 'api' }));
  await occur(sampleEvent({ event_time: '2026-11-01T11:00:00Z', release: 'r2', service_name: 'api' }));
  groupB = await occur(
    sampleEvent({ exception_type: 'RangeError', event_time: '2026-11-02T10:00:00Z', service_name: 'jobs' }),
  );
});

describe('reads', () => {
  it('groups one bug across releases and counts its occurrences', async () => {
    expect(groupA).not.toBe(groupB);
    expect(await group(groupA)).toMatchObject({
      occurrence_count: 2,
      last_release: 'r2',
      state: 'unresolved',
      first_seen_time: '2026-11-01T10:00:00.000Z',
      last_seen_time: '2026-11-01T11:00:00.000Z',
    });
  });

  it('lists groups newest first, filters, and pages with a signed token', async () => {
    const all = await get<{ error_groups: Group[] }>('/error_groups');
    expect(all.body.error_groups.map((g) => g.uid)).toEqual([groupB, groupA]);
    const api = await get<{ error_groups: Group[] }>('/error_groups?service_name=api');
    expect(api.body.error_groups.map((g) => g.uid)).toEqual([groupA]);
    const after = await get<{ error_groups: Group[] }>('/error_groups?last_seen_after=2026-11-02T00:00:00Z');
    expect(after.body.error_groups.map((g) => g.uid)).toEqual([groupB]);
    const page1 = await get<{ error_groups: Group[]; next_page_token: string }>('/error_groups?page_size=1');
    expect(page1.body.error_groups.map((g) => g.uid)).toEqual([groupB]);
    const page2 = await get<{ error_groups: Group[]; next_page_token?: string }>(
      `/error_groups?page_size=1&page_token=${page1.body.next_page_token}`,
    );
    expect(page2.body.error_groups.map((g) => g.uid)).toEqual([groupA]);
    expect(page2.body.next_page_token).toBeUndefined();
    const tampered = `${page1.body.next_page_token.slice(0, -2)}AA`;
    expect((await get(`/error_groups?page_token=${tampered}`)).body).toMatchObject({ code: 'invalid_request' });
  });

  it("lists a group's events newest first and reads one under its group", async () => {
    const list = await get<{ error_events: { uid: string; release: string; name: string }[]; next_page_token: string }>(
      `/error_groups/${groupA}/error_events?page_size=1`,
    );
    expect(list.body.error_events.map((e) => e.release)).toEqual(['r2']);
    const next = await get<{ error_events: { release: string }[] }>(
      `/error_groups/${groupA}/error_events?page_token=${list.body.next_page_token}`,
    );
    expect(next.body.error_events.map((e) => e.release)).toEqual(['r1']);
    const uid = list.body.error_events[0]!.uid;
    expect((await get(`/error_groups/${groupA}/error_events/${uid}`)).status).toBe(200);
    expect((await get(`/error_groups/${groupB}/error_events/${uid}`)).status).toBe(404);
  });

  it('keeps environments apart', async () => {
    expect((await get(`/error_groups/${groupA}`, other.secretKey)).status).toBe(403);
    const theirs = await call(t.s.web.url, 'GET', `${envBase(other)}/error_groups/${groupA}`, { key: other.secretKey });
    expect(theirs.status).toBe(404);
  });
});

describe('triage', () => {
  it('follows the state table; a stale etag or a forbidden state changes nothing', async () => {
    const g0 = await group(groupB);
    const reopen = await post(`/error_groups/${groupB}:reopen`, { etag: g0.etag });
    expect(reopen).toMatchObject({ status: 409, body: { code: 'INVALID_STATE' } });
    const ack = await post<Group>(`/error_groups/${groupB}:acknowledge`, { etag: g0.etag });
    expect(ack).toMatchObject({ status: 200, body: { state: 'acknowledged' } });
    expect(ack.body.etag).not.toBe(g0.etag);
    const stale = await post(`/error_groups/${groupB}:resolve`, { etag: g0.etag });
    expect(stale).toMatchObject({ status: 412, body: { code: 'ETAG_MISMATCH' } });
    expect(await group(groupB)).toMatchObject({ state: 'acknowledged', etag: ack.body.etag });
    const again = await post(`/error_groups/${groupB}:acknowledge`, { etag: ack.body.etag });
    expect(again).toMatchObject({ status: 409, body: { code: 'INVALID_STATE' } });
    const resolved = await post<Group>(`/error_groups/${groupB}:resolve`, {}, { 'if-match': `"${ack.body.etag}"` });
    expect(resolved).toMatchObject({ status: 200, body: { state: 'resolved' } });
    const back = await post<Group>(`/error_groups/${groupB}:reopen`, { etag: resolved.body.etag });
    expect(back).toMatchObject({ status: 200, body: { state: 'unresolved' } });
    expect((await post(`/error_groups/${groupB}:resolve`, {})).body).toMatchObject({ code: 'invalid_request' });
  });

  it('of concurrent calls with one etag, exactly one succeeds', async () => {
    const { etag } = await group(groupA);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        post(`/error_groups/${groupA}:${i % 2 ? 'acknowledge' : 'resolve'}`, { etag }),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 412)).toHaveLength(7);
  });

  it('a new occurrence reopens a resolved group; one from before the resolve is counted but does not', async () => {
    let g = await group(groupA);
    if (g.state !== 'resolved') {
      if (g.state === 'acknowledged') g = (await post<Group>(`/error_groups/${groupA}:reopen`, { etag: g.etag })).body;
      g = (await post<Group>(`/error_groups/${groupA}:resolve`, { etag: g.etag })).body;
    }
    expect(g.state).toBe('resolved');
    await occur(sampleEvent({ event_time: '2026-11-01T12:00:00Z', release: 'r2' }));
    const late = await group(groupA);
    expect(late).toMatchObject({ state: 'resolved', occurrence_count: g.occurrence_count + 1, etag: g.etag });
    await occur(sampleEvent({ event_time: new Date(Date.now() + 60_000).toISOString(), release: 'r3' }));
    const reopened = await group(groupA);
    expect(reopened).toMatchObject({
      state: 'unresolved',
      occurrence_count: g.occurrence_count + 2,
      last_release: 'r3',
    });
    expect(reopened.etag).not.toBe(g.etag);
  });
});

// Bulk triage over HTTP (`:batchUpdate`): each group changes only while its etag matches, results
// come one per group in the order sent (a stale etag is that group's ETAG_MISMATCH, the rest go
// on), unknown and foreign groups are not_found, a malformed or oversized body changes nothing,
// concurrent batches over shared groups change each group once and never deadlock, and each
// change writes the webhook event the single call writes.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import { createKey, type CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { call, createTestEnv, useWeb } from '../support/harness.ts';
import { envBase } from './support.ts';

interface Group {
  name: string;
  uid: string;
  state: string;
  etag: string;
  resolve_time?: string;
}
type Result = Group | { error: { code: string; message: string; details?: Record<string, unknown> } };

const stack = useWeb();

/** `n` unresolved groups of `env`, made as the ingest makes them; fingerprints in another order than ids. */
async function groups(env: CreatedEnv, n: number): Promise<{ id: string; etag: string }[]> {
  const rows = Array.from({ length: n }, (_, i) => ({
    id: newId('eg'),
    env_id: env.env.id,
    fingerprint: randomBytes(16).toString('hex'),
    title: `Error: number ${i}`,
    etag: randomBytes(8).toString('hex'),
    first_seen_time: new Date(),
    last_seen_time: new Date(),
    occurrence_count: 1,
    grouping: JSON.stringify({ method: 'message', frames: [] }),
  }));
  await stack.h.db('error_groups').insert(rows);
  return rows.map(({ id, etag }) => ({ id, etag }));
}

const batch = (env: CreatedEnv, body: unknown, key = env.secretKey) =>
  call<{ results: Result[]; code?: string; details?: { fields: { field: string }[] } }>(
    stack.web.url,
    'POST',
    `${envBase(env)}/error_groups:batchUpdate`,
    { key, body },
  );
const single = (env: CreatedEnv, id: string, action: string, etag: string) =>
  call<Group>(stack.web.url, 'POST', `${envBase(env)}/error_groups/${id}:${action}`, {
    key: env.secretKey,
    body: { etag },
  });
const rowsOf = async (ids: string[]) =>
  (await stack.h.db('error_groups').whereIn('id', ids).select('id', 'state', 'etag')) as {
    id: string;
    state: string;
    etag: string;
  }[];
const stateOf = async (id: string) => (await rowsOf([id]))[0]!;
const pairs = (gs: { id: string; etag: string }[]) => gs.map((g) => ({ name: g.id, etag: g.etag }));

describe(':batchUpdate', () => {
  it('changes every group whose etag is fresh, answering each with its new etag, in the order sent', async () => {
    const env = await createTestEnv(stack.h.db);
    const [a, b, c] = await groups(env, 3);
    // An id, or the group's resource name, names it.
    const sent = [c!, a!, b!];
    const res = await batch(env, {
      action: 'resolve',
      groups: [
        { name: c!.id, etag: c!.etag },
        { name: `${env.env.name}/error_groups/${a!.id}`, etag: a!.etag },
        { name: b!.id, etag: b!.etag },
      ],
    });
    expect(res.status).toBe(200);
    const results = res.body.results as Group[];
    expect(results.map((r) => r.uid)).toEqual(sent.map((g) => g.id));
    for (const [i, r] of results.entries()) {
      expect(r).toMatchObject({ name: `${env.env.name}/error_groups/${sent[i]!.id}`, state: 'resolved' });
      expect(r.etag).not.toBe(sent[i]!.etag);
      expect(r.resolve_time).toEqual(expect.any(String));
      expect(await stateOf(r.uid)).toEqual({ id: r.uid, state: 'resolved', etag: r.etag });
    }
  });

  it('leaves a group whose etag went stale as it is, its result ETAG_MISMATCH, and changes the others', async () => {
    const env = await createTestEnv(stack.h.db);
    const [a, b, c, d] = await groups(env, 4);
    const acked = await single(env, b!.id, 'acknowledge', b!.etag);
    expect(acked.status).toBe(200);
    // d is unresolved with its etag fresh: reopening it is the state table's INVALID_STATE, as one call.
    const res = await batch(env, { action: 'resolve', groups: pairs([a!, b!, c!]) });
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(3);
    expect(res.body.results[0]).toMatchObject({ uid: a!.id, state: 'resolved' });
    expect(res.body.results[1]).toEqual({
      error: {
        code: 'ETAG_MISMATCH',
        message: 'the group changed since you read it; read it again and retry with its current etag',
        details: { current_state: 'acknowledged' },
      },
    });
    expect(res.body.results[2]).toMatchObject({ uid: c!.id, state: 'resolved' });
    expect(await stateOf(b!.id)).toEqual({ id: b!.id, state: 'acknowledged', etag: acked.body.etag });
    const reopen = await batch(env, { action: 'reopen', groups: pairs([d!]) });
    expect(reopen.body.results).toEqual([
      {
        error: {
          code: 'INVALID_STATE',
          message: 'cannot reopen a group that is unresolved',
          details: { state: 'unresolved', allowed_from: ['resolved', 'acknowledged'] },
        },
      },
    ]);
    expect(await stateOf(d!.id)).toEqual({ id: d!.id, state: 'unresolved', etag: d!.etag });
  });

  it("answers not_found for a group that is not in this environment, by id or by another environment's name", async () => {
    const env = await createTestEnv(stack.h.db);
    const other = await createTestEnv(stack.h.db);
    const [mine] = await groups(env, 1);
    const [theirs, theirOther] = await groups(other, 2);
    const unknown = `eg_${'0'.repeat(26)}`;
    const res = await batch(env, {
      action: 'acknowledge',
      groups: [
        { name: unknown, etag: 'x' },
        { name: theirs!.id, etag: theirs!.etag },
        { name: `${other.env.name}/error_groups/${theirOther!.id}`, etag: theirOther!.etag },
        { name: mine!.id, etag: mine!.etag },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.results.slice(0, 3)).toEqual([
      { error: { code: 'not_found', message: `no error group ${unknown} in this environment` } },
      { error: { code: 'not_found', message: `no error group ${theirs!.id} in this environment` } },
      {
        error: {
          code: 'not_found',
          message: `no error group ${other.env.name}/error_groups/${theirOther!.id} in this environment`,
        },
      },
    ]);
    expect(res.body.results[3]).toMatchObject({ uid: mine!.id, state: 'acknowledged' });
    expect(await stateOf(theirs!.id)).toEqual({ id: theirs!.id, state: 'unresolved', etag: theirs!.etag });
  });

  it('refuses a malformed body whole, naming the field, and changes nothing', async () => {
    const env = await createTestEnv(stack.h.db);
    const gs = await groups(env, 101);
    const refused = async (body: unknown, field: string) => {
      const res = await batch(env, body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_request');
      expect(res.body.details!.fields.map((f) => f.field)).toContain(field);
    };
    await refused({ action: 'resolve', groups: pairs(gs) }, 'body.groups');
    await refused({ action: 'resolve', groups: [] }, 'body.groups');
    await refused({ action: 'close', groups: pairs(gs.slice(0, 2)) }, 'body.action');
    await refused({ action: 'resolve', groups: [{ name: gs[0]!.id }] }, 'body.groups.0.etag');
    await refused({ action: 'resolve', groups: [{ name: 'eg_nope', etag: 'x' }] }, 'body.groups.0.name');
    await refused({ action: 'resolve', groups: pairs(gs.slice(0, 1)), extra: 1 }, 'body');
    // One group twice, by id and by name, is refused whole: its second result would depend on its first.
    const twice = [
      { name: gs[0]!.id, etag: gs[0]!.etag },
      { name: gs[1]!.id, etag: gs[1]!.etag },
      { name: `${env.env.name}/error_groups/${gs[0]!.id}`, etag: gs[0]!.etag },
    ];
    await refused({ action: 'resolve', groups: twice }, 'body.groups.2.name');
    const rows = await rowsOf(gs.map((g) => g.id));
    expect(rows.every((r) => r.state === 'unresolved' && r.etag === gs.find((g) => g.id === r.id)!.etag)).toBe(true);
    // 100 is the limit, and is taken.
    const hundred = await batch(env, { action: 'acknowledge', groups: pairs(gs.slice(0, 100)) });
    expect(hundred.status).toBe(200);
    expect((hundred.body.results as Group[]).every((r) => r.state === 'acknowledged')).toBe(true);
  });

  it('changes each group once when batches from two clients over shared groups race, without a deadlock', async () => {
    const env = await createTestEnv(stack.h.db);
    const second = await createKey(stack.h.db, env.env, 'secret');
    const gs = await groups(env, 60);
    const shuffled = [...gs].sort(() => Math.random() - 0.5);
    const sent: [string, { id: string; etag: string }[], string][] = [
      ['resolve', gs.slice(0, 40), env.secretKey],
      ['acknowledge', gs.slice(20, 60).reverse(), second.token],
      ['resolve', shuffled.slice(0, 45), second.token],
      ['acknowledge', shuffled.slice(15), env.secretKey],
    ];
    const answers = await Promise.all(
      sent.map(([action, list, key]) => batch(env, { action, groups: pairs(list) }, key)),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    const now = new Map((await rowsOf(gs.map((g) => g.id))).map((r) => [r.id, r]));
    for (const g of gs) {
      const wins: Group[] = [];
      for (const [n, [action, list]] of sent.entries()) {
        const at = list.findIndex((x) => x.id === g.id);
        if (at < 0) continue;
        const r = answers[n]!.body.results[at]!;
        if ('error' in r) expect(r.error.code).toBe('ETAG_MISMATCH');
        else {
          expect(r.state).toBe(action === 'resolve' ? 'resolved' : 'acknowledged');
          wins.push(r);
        }
      }
      // Every batch carried the etag read before any ran: exactly one of them changed the group.
      expect(wins).toHaveLength(1);
      expect(now.get(g.id)).toEqual({ id: g.id, state: wins[0]!.state, etag: wins[0]!.etag });
    }
  });

  it('writes the webhook event a single call writes, for each group it changed, in the order sent', async () => {
    const env = await createTestEnv(stack.h.db);
    const endpoint = await call(stack.web.url, 'POST', `${envBase(env)}/webhook_endpoints`, {
      key: env.secretKey,
      body: { url: 'http://127.0.0.1:9/hook', event_types: ['error_group.resolved', 'error_group.reopened'] },
    });
    expect(endpoint.status).toBe(201);
    const [a, b, c, d] = await groups(env, 4);
    const messages = async () =>
      (
        (await stack.h.db('webhook_messages').where({ env_id: env.env.id }).orderBy('seq')) as {
          event_type: string;
          subject: string;
          body: string;
        }[]
      ).map((m) => ({
        type: m.event_type,
        subject: m.subject,
        body: JSON.parse(m.body) as { type: string; data: Group },
      }));

    // One single call, for the shape to compare with.
    const one = await single(env, d!.id, 'resolve', d!.etag);
    const [singleMessage] = await messages();
    expect(singleMessage).toMatchObject({ type: 'error_group.resolved', subject: d!.id, body: { data: one.body } });

    const acked = await batch(env, { action: 'acknowledge', groups: pairs([c!]) });
    expect(acked.body.results[0]).toMatchObject({ state: 'acknowledged' });
    expect(await messages()).toHaveLength(1); // acknowledging is no event, as a single call

    const stale = { id: c!.id, etag: c!.etag };
    const resolved = await batch(env, { action: 'resolve', groups: pairs([b!, stale, a!]) });
    const [rb, , ra] = resolved.body.results as Group[];
    const reopened = await batch(env, { action: 'reopen', groups: pairs([{ id: a!.id, etag: ra!.etag }]) });
    const after = (await messages()).slice(1);
    expect(after.map((m) => [m.type, m.subject])).toEqual([
      ['error_group.resolved', b!.id],
      ['error_group.resolved', a!.id],
      ['error_group.reopened', a!.id],
    ]);
    expect(after.map((m) => m.body.data)).toEqual([rb, ra, reopened.body.results[0]]);
    expect(Object.keys(after[0]!.body).sort()).toEqual(Object.keys(singleMessage!.body).sort());
    expect(Object.keys(after[0]!.body.data).sort()).toEqual(Object.keys(singleMessage!.body.data).sort());
  });
});

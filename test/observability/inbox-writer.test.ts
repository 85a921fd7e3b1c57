// Group commit of captures (src/domain/observability/intake/inbox-writer.ts) on the real Postgres:
// requests queued behind an INSERT in flight share the next one, each answers by its own rows'
// fate, and one request's bad rows never fail another's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InboxWriter } from '../../src/domain/observability/intake/inbox-writer.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { sealedSample } from './support.ts';

let h: Harness;
let env: CreatedEnv;

beforeAll(async () => {
  h = await createHarness();
  env = await createTestEnv(h.db);
});
afterAll(async () => {
  await h?.close();
});

const row = (envId = env.env.id) => sealedSample(h, envId);
const stored = async (uids: string[]) =>
  Number((await h.db('error_event_inbox').whereIn('uid', uids).count({ n: '*' }).first())?.n);

describe('InboxWriter', () => {
  it('writes requests queued behind an INSERT in flight together, answering each once committed', async () => {
    const writer = new InboxWriter(h.db, { concurrency: 1, maxRows: 1000 });
    const rows = Array.from({ length: 40 }, () => [row()]);
    let statements = 0;
    const count = () => void (statements += 1);
    h.db.on('query', count);
    try {
      await Promise.all(rows.map((r) => writer.write(r)));
    } finally {
      h.db.off('query', count);
    }
    expect(await stored(rows.flat().map((r) => r.uid))).toBe(40);
    // The first request goes alone; the other 39 queued behind it and share the second INSERT.
    expect(statements).toBe(2);
  });

  it('fails only the request whose rows fail, not the others of the same INSERT', async () => {
    const writer = new InboxWriter(h.db, { concurrency: 1, maxRows: 1000 });
    const first = [row()];
    const bad = [row('env_does_not_exist')];
    const good = [row(), row()];
    const outcomes = await Promise.allSettled([writer.write(first), writer.write(bad), writer.write(good)]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await stored([...first, ...good].map((r) => r.uid))).toBe(3);
    expect(await stored(bad.map((r) => r.uid))).toBe(0);
  });

  it('never splits one request across INSERTs, even past the row limit', async () => {
    const writer = new InboxWriter(h.db, { concurrency: 1, maxRows: 5 });
    const big = Array.from({ length: 12 }, () => row());
    const small = [row()];
    await Promise.all([writer.write([row()]), writer.write(big), writer.write(small)]);
    expect(await stored([...big, ...small].map((r) => r.uid))).toBe(13);
  });
});

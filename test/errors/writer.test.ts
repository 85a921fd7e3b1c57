// Group commit of captures (src/domain/errors/intake/writer.ts) on the real Postgres and
// pg-boss: requests queued behind an INSERT in flight share the next one, each answers by its own
// events' fate, one request's bad events never fail another's, and small requests never wait
// behind batches.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IntakeWriter } from '../../src/domain/errors/intake/writer.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { AppJobs as Jobs } from '../../src/queues.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { queuedEvents, sealedSample, testJobs } from './support.ts';

let h: Harness;
let env: CreatedEnv;
let jobs: Jobs;

beforeAll(async () => {
  h = await createHarness();
  env = await createTestEnv(h.db);
  jobs = await testJobs(h);
});
afterAll(async () => {
  await jobs?.boss.stop({ graceful: false, close: true });
  await h?.close();
});

const row = (envId = env.env.id) => sealedSample(h, envId);
/** A named event (its id is claimed in error_event_ids, whose environment must exist). */
const named = (envId = env.env.id) => ({ ...row(envId), event_id: crypto.randomUUID().replaceAll('-', '') });
const queued = async (uids: string[]) => (await queuedEvents(h)).filter((q) => uids.includes(q.uid)).length;

describe('IntakeWriter', () => {
  it('writes requests queued behind an INSERT in flight together, answering each once committed', async () => {
    const writer = new IntakeWriter(h.db, jobs, { concurrency: 1, maxRows: 1000, smallRows: 100 });
    const rows = Array.from({ length: 40 }, () => [row()]);
    let inserts = 0;
    // The jobs' INSERTs (each commit also counts its events pending, with an INSERT of its own).
    const count = (q: { sql: string }) => void (/insert into\s+"?pgboss/i.test(q.sql) && (inserts += 1));
    h.db.on('query', count);
    try {
      await Promise.all(rows.map((r) => writer.write(r)));
    } finally {
      h.db.off('query', count);
    }
    expect(await queued(rows.flat().map((r) => r.uid))).toBe(40);
    // The first request goes alone; the other 39 queued behind it and share the second INSERT.
    expect(inserts).toBe(2);
  });

  it('fails only the request whose events fail, not the others of the same INSERT', async () => {
    const writer = new IntakeWriter(h.db, jobs, { concurrency: 1, maxRows: 1000, smallRows: 100 });
    const first = [named()];
    const bad = [named('env_does_not_exist')];
    const good = [named(), row()];
    const outcomes = await Promise.allSettled([writer.write(first), writer.write(bad), writer.write(good)]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await queued([...first, ...good].map((r) => r.uid))).toBe(3);
    expect(await queued(bad.map((r) => r.uid))).toBe(0);
  });

  it('never splits one request across INSERTs, even past the row limit', async () => {
    const writer = new IntakeWriter(h.db, jobs, { concurrency: 1, maxRows: 5, smallRows: 100 });
    const big = Array.from({ length: 12 }, () => row());
    const small = [row()];
    await Promise.all([writer.write([row()]), writer.write(big), writer.write(small)]);
    expect(await queued([...big, ...small].map((r) => r.uid))).toBe(13);
  });

  it('writes a small request before the batches queued ahead of it, in an INSERT batches never take', async () => {
    const writer = new IntakeWriter(h.db, jobs, { concurrency: 2, maxRows: 2, smallRows: 1 });
    const requests = {
      'batch 1': [row(), row()],
      'batch 2': [row(), row()],
      'batch 3': [row(), row()],
      single: [row()],
    };
    // The order the INSERTs are sent in, named by the request whose rows each carries.
    const sent: string[] = [];
    const record = (q: { sql: string; bindings?: unknown[] }) => {
      if (!/insert into\s+"?pgboss/i.test(q.sql)) return;
      const text = JSON.stringify(q.bindings ?? []);
      for (const [name, rows] of Object.entries(requests)) if (text.includes(rows[0]!.uid)) sent.push(name);
    };
    h.db.on('query', record);
    try {
      // Three batches fill the batches' one INSERT and its line; the single capture after them
      // takes the other INSERT at once.
      await Promise.all(Object.values(requests).map((rows) => writer.write(rows)));
    } finally {
      h.db.off('query', record);
    }
    expect(sent).toEqual(['batch 1', 'single', 'batch 2', 'batch 3']);
  });
});

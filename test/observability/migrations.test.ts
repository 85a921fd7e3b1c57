// The migration that seals captured payloads at rest (migrations/20261121170000_…): rows accepted
// before it, in the inbox and the dead letters, are sealed in place (never left in plaintext, never
// dropped), it refuses to run without the service key when there is something to seal, and `down`
// gives back the plaintext jsonb the previous schema holds. And the one that stores event bodies
// deflated (20261121200000_…): older jsonb bodies stay readable, and `down` inflates the new ones.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { keyringFromConfig } from '../../src/crypto.ts';
import { newEventUid } from '../../src/domain/observability/capture.ts';
import { errorEventInput } from '../../src/domain/observability/event-schema.ts';
import { unpackBody } from '../../src/domain/observability/event-body.ts';
import { groupQueries } from '../../src/domain/observability/group-queries.ts';
import { ingestBatch } from '../../src/domain/observability/ingest.ts';
import { openPayload, sealPayload } from '../../src/domain/observability/sealed-payload.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { testEncryptionKey } from '../support/config.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { dumpDatabase } from '../support/pg.ts';
import { sampleEvent } from './support.ts';

const migration = { name: '20261121170000_seal_error_event_payloads.ts' };
const secret = 'cairn_sk_live_M1gr4t3dS3cr3tK3yPl4nt3dB3f0r3Up';

let h: Harness;
let env: CreatedEnv;
const saved = { DATABASE_URL: process.env.DATABASE_URL, CAIRN_ENCRYPTION_KEY: process.env.CAIRN_ENCRYPTION_KEY };

beforeAll(async () => {
  h = await createHarness();
  env = await createTestEnv(h.db);
});
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});
afterAll(async () => {
  await h?.close();
});

/** The release phase's environment (src/migrate.ts runs with the full configuration). */
function releaseEnvironment(withKey: boolean): void {
  process.env.DATABASE_URL = h.config.DATABASE_URL;
  if (withKey) process.env.CAIRN_ENCRYPTION_KEY = testEncryptionKey;
  else delete process.env.CAIRN_ENCRYPTION_KEY;
}

describe('sealing existing payloads', () => {
  it('seals inbox and dead-letter rows in place, refuses without the key, and opens them again on down', async () => {
    releaseEnvironment(false);
    await h.db.migrate.down(migration); // empty tables: no key needed either way
    const payload = (message: string) => errorEventInput.parse(sampleEvent({ message, release: 'r-7' }));
    const inbox = [{ uid: newEventUid('c0'), env_id: env.env.id, payload: payload(`inbox ${secret}`) }];
    const dead = [
      {
        uid: newEventUid('c0'),
        env_id: env.env.id,
        payload: payload(`dead ${secret}`),
        receive_time: new Date(),
        attempts: 10,
        last_error: 'boom',
      },
    ];
    // As the previous schema held them (a poison payload the API would refuse included).
    const poison = {
      uid: newEventUid('c0'),
      env_id: env.env.id,
      payload: { event_time: 'never', exception_type: 'Poison', release: 42 },
    };
    await h
      .db('error_event_inbox')
      .insert([...inbox, poison].map((r) => ({ ...r, payload: JSON.stringify(r.payload) })));
    await h.db('error_event_dead').insert(dead.map((r) => ({ ...r, payload: JSON.stringify(r.payload) })));
    expect((await dumpDatabase(h.db)).text).toContain(secret);

    await expect(h.db.migrate.up(migration)).rejects.toThrow(/needs the service key/);
    expect(await h.db('error_event_inbox').count({ n: '*' }).first()).toEqual({ n: '2' }); // rolled back whole

    releaseEnvironment(true);
    await h.db.migrate.up(migration);
    expect((await dumpDatabase(h.db)).text).not.toContain(secret);
    const keyring = keyringFromConfig(h.config);
    const sealedInbox = await h
      .db('error_event_inbox')
      .orderBy('uid')
      .select('uid', 'env_id', 'release', 'payload_sealed');
    expect(sealedInbox.map((r) => r.release).sort()).toEqual(['r-7', null].sort());
    expect(
      openPayload(
        keyring,
        sealedInbox.find((r) => r.uid === inbox[0]!.uid)!,
      ),
    ).toEqual(inbox[0]!.payload);
    const sealedDead = await h.db('error_event_dead').first('uid', 'env_id', 'release', 'payload_sealed');
    expect(openPayload(keyring, sealedDead)).toEqual(dead[0]!.payload);

    await h.db.migrate.down(migration);
    expect(await h.db('error_event_inbox').where({ uid: inbox[0]!.uid }).first('payload')).toEqual({
      payload: inbox[0]!.payload,
    });
    expect(await h.db('error_event_inbox').where({ uid: poison.uid }).first('payload')).toEqual({
      payload: poison.payload,
    });
    expect(await h.db('error_event_dead').first('payload')).toEqual({ payload: dead[0]!.payload });

    await h.db.migrate.up(migration);
    // The sealed rows are the workers' as any capture is: the event is stored, scrubbed.
    const noMaps = () => Promise.reject(new Error('no maps in this test'));
    expect((await ingestBatch({ db: h.db, keyring, load: noMaps }, [inbox[0]!.uid])).stored).toBe(1);
    const stored = await h.db('error_events').where({ uid: inbox[0]!.uid }).first('body', 'body_deflated', 'release');
    expect(stored.release).toBe('r-7');
    expect(unpackBody(stored).message).toBe('inbox [Filtered]');
  });
});

describe('deflated event bodies', () => {
  const deflate = { name: '20261121200000_deflate_error_event_bodies.ts' };
  const noMaps = () => Promise.reject(new Error('no maps in this test'));

  it('keeps older jsonb bodies readable, refuses a row with both or neither, and inflates back on down', async () => {
    releaseEnvironment(true);
    const keyring = keyringFromConfig(h.config);
    const accept = async (message: string) => {
      const row = sealPayload(
        keyring,
        env.env.id,
        newEventUid('c0'),
        errorEventInput.parse(sampleEvent({ message, exception_type: 'BodyError' })),
      );
      await h.db('error_event_inbox').insert(row);
      expect((await ingestBatch({ db: h.db, keyring, load: noMaps }, [row.uid])).stored).toBe(1);
      return row.uid;
    };
    const newer = await accept('stored deflated');
    const deflated = await h.db('error_events').where({ uid: newer }).first('body', 'body_deflated');
    expect(deflated.body).toBeNull();
    expect(deflated.body_deflated.length).toBeLessThan(JSON.stringify(unpackBody(deflated)).length);
    // A row as the previous schema held it (the workers wrote jsonb then).
    const template = await h.db('error_events').where({ uid: newer }).first();
    await h.db.migrate.down(deflate);
    const older = newEventUid('c0');
    await h.db('error_events').insert({
      ...Object.fromEntries(
        Object.entries(template).filter(([k]) => !['body', 'body_deflated', 'create_time'].includes(k)),
      ),
      uid: older,
      body: JSON.stringify({ ...unpackBody(template), message: 'stored as jsonb' }),
    });
    await h.db.migrate.up(deflate);
    const newest = await accept('stored deflated again');

    const rows = await h.db('error_events').whereIn('uid', [older, newest]).select('uid', 'body', 'body_deflated');
    const row = (uid: string) => rows.find((r) => r.uid === uid)!;
    expect(row(older).body_deflated).toBeNull();
    expect(row(newest).body).toBeNull();
    // Both read back through the API's query, whichever column holds them.
    const reads = groupQueries(h.db);
    expect((await reads.getEvent(env.env.id, undefined, older))!.body.message).toBe('stored as jsonb');
    expect((await reads.getEvent(env.env.id, undefined, newer))!.body.message).toBe('stored deflated');
    const group = (await reads.getEvent(env.env.id, undefined, newer))!.group_id;
    expect((await reads.listEvents(env.env.id, group, undefined, 10)).map((e) => e.body.message).sort()).toEqual([
      'stored as jsonb',
      'stored deflated',
      'stored deflated again',
    ]);

    await expect(
      h
        .db('error_events')
        .where({ uid: newest })
        .update({ body: row(older).body }),
    ).rejects.toThrow(/error_events_one_body/);
    await expect(h.db('error_events').where({ uid: older }).update({ body: null })).rejects.toThrow(
      /error_events_one_body/,
    );

    await h.db.migrate.down(deflate);
    const back = await h.db('error_events').whereIn('uid', [older, newer, newest]).select('uid', 'body');
    expect(Object.fromEntries(back.map((r) => [r.uid, r.body.message]))).toEqual({
      [older]: 'stored as jsonb',
      [newer]: 'stored deflated',
      [newest]: 'stored deflated again',
    });
    await h.db.migrate.up(deflate);
    expect((await reads.getEvent(env.env.id, undefined, newest))!.body.message).toBe('stored deflated again');
  });
});

// The real @sentry/node, in its own Node process, pointed at Cairn by a DSN and nothing else: a
// handled error, a message and an uncaught exception arrive, are processed by the real worker and
// read back through the /v1 API by the SDK's own event ids; the secret in the message comes back
// scrubbed, the frames keep their files and functions.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { call } from '../../support/harness.ts';
import { dsnFor } from '../../../src/domain/errors/sentry/client-keys.ts';
import { envBase, readStored, useStack } from '../support.ts';
import { eventually } from '../../support/probes.ts';

const t = useStack();

const dsn = () => dsnFor(t.s.web.url, t.env.clientKey.publicKey, t.env.clientKey.projectNumber);

interface StoredEvent {
  name: string;
  exception_type: string;
  message?: string;
  release?: string;
  tags: Record<string, string>;
  stack_frames: { function?: string; file?: string; line?: number; column?: number; in_app?: boolean }[];
  sentry?: Record<string, unknown>;
  linked_exceptions?: {
    source: string;
    parent?: number;
    exception_type: string;
    message?: string;
    stack_frames: { function?: string }[];
  }[];
}

/** An event the SDK says it sent, by its `event_id`, from the envelopes Cairn answered. */
const readBySdkId = async (id: string): Promise<StoredEvent> =>
  (await readStored<StoredEvent>(t.s.web, t.env, id)).body;

describe('@sentry/node', () => {
  it('sends handled errors, messages and uncaught exceptions that Cairn stores, scrubbed and grouped', async () => {
    const child = spawn(process.execPath, ['test/errors/sentry/fixtures/node-app.mjs'], {
      env: { ...process.env, SENTRY_DSN: dsn() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    // The SDK's uncaught-exception handler exits with 1 once it has sent the event.
    expect(code, out).toBe(1);

    // Sentry's event ids are claimed as their events are stored (intake/capture.ts `ClaimAt`).
    const claimed = async () =>
      (await t.h.db('error_event_ids').where({ env_id: t.env.env.id }).pluck('event_id')) as string[];
    await eventually(async () => expect(await claimed()).toHaveLength(4), { timeoutMs: 20_000 });
    const ids = await claimed();
    const events = await Promise.all(ids.map(readBySdkId));
    const byType = Object.fromEntries(events.map((e) => [e.exception_type, e]));

    const handled = byType.TypeError!;
    expect(handled.message).toMatch(/^payment declined for card \[Filtered\]/);
    expect(handled.message).not.toContain('hunter2');
    expect(handled.release).toBe('node-app@1.0.0');
    expect(handled.tags).toMatchObject({ environment: 'ci', checkout: 'v2' });
    const thrower = handled.stack_frames.at(-1)!;
    expect(thrower.function).toBe('chargeCard');
    expect(thrower.file).toMatch(/test\/errors\/sentry\/fixtures\/node-app\.mjs$/);
    expect(thrower.line).toBe(10);
    expect(handled.sentry).toMatchObject({ platform: 'node', level: 'error', sdk: { name: 'sentry.javascript.node' } });

    const message = byType.Message!;
    expect(message.message).toBe('nightly import finished with 3 warnings');
    expect(message.sentry).toMatchObject({ kind: 'message', level: 'info' });

    // The chained error: its cause is a linked exception, with frames, as a printed [cause] is.
    const chained = byType.Error!;
    expect(chained.message).toBe('could not save the order');
    expect(chained.linked_exceptions).toEqual([
      expect.objectContaining({ source: 'cause', exception_type: 'TypeError', message: 'socket hang up' }),
    ]);
    expect(chained.linked_exceptions![0]!.parent).toBeUndefined();
    expect(chained.linked_exceptions![0]!.stack_frames.at(-1)!.function).toBe('saveOrder');
    expect(chained.sentry).not.toHaveProperty('causes');

    const uncaught = byType.RangeError!;
    expect(uncaught.message).toBe('config value out of range');
    expect(uncaught.stack_frames.at(-1)!.function).toMatch(/parseConfig/);
    expect(uncaught.sentry).toMatchObject({ level: 'fatal' });

    // Four groups, one per kind of error.
    const groups = await call<{ error_groups: { title: string }[] }>(
      t.s.web.url,
      'GET',
      `${envBase(t.env)}/error_groups`,
      {
        key: t.env.secretKey,
      },
    );
    expect(groups.body.error_groups.map((g) => g.title).sort()).toEqual([
      'Error: could not save the order',
      'RangeError: config value out of range',
      'TypeError: payment declined for card [Filtered] (password=[Filtered]',
      'nightly import finished with 3 warnings',
    ]);
  });
});

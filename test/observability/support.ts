// Error-tracking test helpers: the real web process and the real worker in-process, and shortcuts
// for captures and reads.
import { keyringFromConfig } from '../../src/crypto.ts';
import { newEventUid } from '../../src/domain/observability/intake/capture.ts';
import { errorEventInput } from '../../src/domain/observability/intake/event-schema.ts';
import { sealPayload, type SealedPayloadRow } from '../../src/domain/observability/intake/sealed-payload.ts';
import { queues } from '../../src/jobs.ts';
import type { WebHandle } from '../../src/server.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { call, startTestWeb, type Answer, type Harness } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';

export interface Stack {
  web: WebHandle;
  worker: WorkerHandle<typeof queues> | undefined;
  stop(): Promise<void>;
}

export async function startStack(h: Harness, options: { worker?: boolean } = {}): Promise<Stack> {
  const web = await startTestWeb(h);
  const worker =
    options.worker === false
      ? undefined
      : await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  return {
    web,
    worker,
    async stop() {
      await worker?.stop();
      await web.stop();
    },
  };
}

export const envBase = (env: CreatedEnv): string => `/v1/${env.env.name}`;

export function sampleEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_time: '2026-11-21T12:00:00Z',
    exception_type: 'TypeError',
    message: "Cannot read properties of undefined (reading 'id')",
    stack: [
      "TypeError: Cannot read properties of undefined (reading 'id')",
      '    at renderUser (/srv/app/src/users.js:10:15)',
      '    at handle (/srv/app/src/server.js:42:7)',
      '    at Layer.handle (/srv/app/node_modules/express/lib/router/layer.js:95:5)',
    ].join('\n'),
    service_name: 'api',
    ...overrides,
  };
}

export async function capture(web: WebHandle, env: CreatedEnv, event: Record<string, unknown>): Promise<string> {
  const res = await call<{ uid: string }>(web.url, 'POST', `${envBase(env)}/error_groups:capture`, {
    key: env.secretKey,
    body: { error_event: event },
  });
  if (res.status !== 202) throw new Error(`capture answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.uid;
}

/** The stored event, once the worker has processed it. */
export async function readStored(
  web: WebHandle,
  env: CreatedEnv,
  uid: string,
  timeoutMs = 20_000,
): Promise<Answer<Record<string, unknown> & { name: string }>> {
  return eventually(
    async () => {
      const res = await call<Record<string, unknown> & { name: string }>(
        web.url,
        'GET',
        `${envBase(env)}/error_groups/-/error_events/${uid}`,
        { key: env.secretKey },
      );
      return res.status === 200 ? res : undefined;
    },
    { timeoutMs },
  );
}

export const groupIdOf = (eventName: string): string => /error_groups\/([^/]+)\//.exec(eventName)![1]!;

/** An inbox (or dead-letter) row of `sampleEvent()`, sealed as a capture seals it. */
export function sealedSample(h: Harness, envId: string): SealedPayloadRow {
  return sealPayload(keyringFromConfig(h.config), envId, newEventUid('c0'), errorEventInput.parse(sampleEvent()));
}

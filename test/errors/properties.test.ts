// Properties over HTTP (fast-check): no capture body, however malformed, gets a 500; a secret
// planted anywhere the scrubber covers never comes back from any read.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { call } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { envBase, groupIdOf, sampleEvent, useStack } from './support.ts';

const t = useStack();

const fieldValue = fc.oneof(
  fc.jsonValue(),
  fc.string(),
  fc.integer(),
  fc.constant(null),
  fc.string({ unit: 'binary' }),
);
const fields = Object.keys(
  sampleEvent({
    trace_id: 'x',
    span_id: 'x',
    tags: {},
    breadcrumbs: [],
    stack_frames: [],
    release: 'x',
    fingerprint: 'x',
  }),
);

// A valid event with some fields swapped for arbitrary values, or arbitrary JSON altogether.
const eventLike = fc.oneof(
  fc
    .record({ field: fc.constantFrom(...fields, 'unknown_field'), value: fieldValue })
    .map(({ field, value }) => sampleEvent({ [field]: value })),
  fc.dictionary(fc.constantFrom(...fields), fieldValue),
  fc.jsonValue(),
);

describe('no capture body gives a 500', () => {
  it('capture', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          eventLike.map((e) => ({ error_event: e })),
          fc.jsonValue(),
          fc.string(),
        ),
        async (body) => {
          const raw = typeof body === 'string' ? body : JSON.stringify(body);
          const res = await call(t.s.web.url, 'POST', `${envBase(t.env)}/error_groups:capture`, {
            key: t.env.secretKey,
            rawBody: raw,
            headers: { 'content-type': 'application/json' },
          });
          expect([202, 400, 413]).toContain(res.status);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('batchCapture', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(eventLike, { minLength: 0, maxLength: 8 }), async (events) => {
        const res = await call(t.s.web.url, 'POST', `${envBase(t.env)}/error_groups:batchCapture`, {
          key: t.env.secretKey,
          body: { error_events: events },
        });
        expect([202, 400]).toContain(res.status);
        if (res.status === 202) expect((res.body.results as unknown[]).length).toBe(events.length);
      }),
      { numRuns: 80 },
    );
  });
});

// Secrets the default policy must find, each with the exact text that must never come back.
const digits = (n: number) => fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n });
const luhnCard = digits(14).map((ds) => {
  const body = [4, ...ds];
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = body[body.length - 1 - i]!;
    if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return [...body, (10 - (sum % 10)) % 10].join('');
});
const alnum = (min: number, max: number) =>
  fc.string({
    unit: fc.constantFrom(...'abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789'),
    minLength: min,
    maxLength: max,
  });
const secret = fc.oneof(
  fc.tuple(luhnCard, fc.constantFrom('', ' ', '-')).map(([c, sep]) => {
    const t = sep ? c.match(/.{4}/g)!.join(sep) : c;
    return { text: t, value: t };
  }),
  fc.tuple(alnum(3, 10), alnum(3, 10)).map(([l, d]) => ({
    text: `${l.toLowerCase()}@${d.toLowerCase()}.com`,
    value: `${l.toLowerCase()}@${d.toLowerCase()}.com`,
  })),
  alnum(16, 16).map((k) => ({ text: `AKIA${k.toUpperCase()}`, value: `AKIA${k.toUpperCase()}` })),
  alnum(32, 40).map((k) => ({ text: `cairn_sk_live_${k}`, value: `cairn_sk_live_${k}` })),
  alnum(20, 40).map((k) => ({ text: `Authorization: Bearer ${k}`, value: k })),
  alnum(8, 16).map((k) => ({ text: `password=${k}`, value: k })),
  fc
    .tuple(alnum(10, 30), alnum(10, 30), alnum(20, 40))
    .map(([a, b, c]) => ({ text: `eyJ${a}.eyJ${b}.${c}`, value: `eyJ${a}.eyJ${b}.${c}` })),
  fc
    .tuple(
      fc.integer({ min: 11, max: 223 }),
      fc.integer({ min: 10, max: 254 }),
      fc.integer({ min: 10, max: 254 }),
      fc.integer({ min: 10, max: 254 }),
    )
    .map((o) => ({ text: o.join('.'), value: o.join('.'), host: true })),
);
const words = fc
  .array(fc.constantFrom('failed', 'for', 'user', 'while', 'calling', 'the', 'api'), { maxLength: 4 })
  .map((w) => w.join(' '));
const place = fc.constantFrom(
  'message',
  'stack',
  'exception_type',
  'breadcrumb',
  'breadcrumb_data',
  'tag',
  'frame_function',
  'frame_file',
  'fingerprint',
);

function plant(where: string, text: string): Record<string, unknown> {
  switch (where) {
    case 'message':
      return { message: text };
    case 'stack':
      return { stack: `Error: ${text}\n    at handler (/srv/app/src/x.js:1:2)` };
    case 'exception_type':
      return { exception_type: `Error ${text}` };
    case 'breadcrumb':
      return { breadcrumbs: [{ message: text }] };
    case 'breadcrumb_data':
      return { breadcrumbs: [{ message: 'GET /x', data: { detail: text } }] };
    case 'tag':
      return { tags: { note: text.slice(0, 200) } };
    case 'frame_function':
      return { stack_frames: [{ function: `fn ${text}`, file: '/srv/app/src/x.js', line: 1 }] };
    case 'frame_file':
      return { stack_frames: [{ function: 'fn', file: `https://app.example.com/a/${text}/x.js`, line: 1 }] };
    default:
      return { fingerprint: text };
  }
}

describe('a planted secret never comes back', () => {
  it('from the event, its group, or either list', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          // An address in a frame's file or function is where code was served from, kept as it is
          // (Scrubber.location); everywhere else it is personal data.
          fc
            .tuple(secret, place, words, words)
            .filter(([sec, where]) => !('host' in sec && where.startsWith('frame_'))),
          { minLength: 1, maxLength: 10 },
        ),
        async (plants) => {
          const events = plants.map(([sec, where, before, after]) =>
            sampleEvent({ stack: undefined, ...plant(where, `${before} ${sec.text} ${after}`.trim()) }),
          );
          const res = await call<{ results: { uid: string }[] }>(
            t.s.web.url,
            'POST',
            `${envBase(t.env)}/error_groups:batchCapture`,
            { key: t.env.secretKey, body: { error_events: events } },
          );
          expect(res.status).toBe(202);
          for (const [i, { uid }] of res.body.results.entries()) {
            const value = plants[i]![0].value;
            const event = await eventually(async () => {
              const r = await call<{ name: string }>(
                t.s.web.url,
                'GET',
                `${envBase(t.env)}/error_groups/-/error_events/${uid}`,
                { key: t.env.secretKey },
              );
              return r.status === 200 ? r.body : undefined;
            });
            const group = groupIdOf(event.name);
            const reads = [
              event,
              (await call(t.s.web.url, 'GET', `${envBase(t.env)}/error_groups/${group}`, { key: t.env.secretKey }))
                .body,
              (
                await call(t.s.web.url, 'GET', `${envBase(t.env)}/error_groups/${group}/error_events?page_size=1000`, {
                  key: t.env.secretKey,
                })
              ).body,
              (
                await call(t.s.web.url, 'GET', `${envBase(t.env)}/error_groups?page_size=1000`, {
                  key: t.env.secretKey,
                })
              ).body,
            ];
            for (const read of reads) expect(JSON.stringify(read)).not.toContain(value);
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});

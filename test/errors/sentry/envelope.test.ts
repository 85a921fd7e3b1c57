// The Sentry envelope reader (src/domain/errors/sentry/envelope.ts): the examples of
// Sentry's envelope documentation, envelopes as the JavaScript SDKs write them, each way an
// envelope can break, and properties: what is written is read back item for item, and any bytes
// at all either read or answer 400 invalid_request, and a body read in chunks of any sizes reads as
// it does whole, with dropped items counted, never kept.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/app-error.ts';
import { EnvelopeReader, parseEnvelope, type Envelope } from '../../../src/domain/errors/sentry/envelope.ts';

const read = (text: string | Buffer) => parseEnvelope(Buffer.isBuffer(text) ? text : Buffer.from(text));
const payloads = (e: Envelope) => e.items.map((i) => [i.type, i.payload.toString('utf8')]);

describe('reading envelopes', () => {
  it("reads the documentation's examples", () => {
    // Two items, both with `length`; the attachment's payload holds a newline.
    const two = read(
      '{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","dsn":"https://e12d836b15bb49d7bbf99e64295d995b@sentry.io/42"}\n' +
        '{"type":"attachment","length":10,"content_type":"text/plain","filename":"hello.txt"}\n' +
        '\ufeffHello\r\n\n' + // a UTF-8 BOM: 3 bytes, then 7
        '{"type":"event","length":41,"content_type":"application/json","filename":"application.log"}\n' +
        '{"message":"hello world","level":"error"}\n',
    );
    expect(two.headers).toMatchObject({ event_id: '9ec79c33ec9942ab8353589fcb2e04dc' });
    expect(two.items.map((i) => [i.type, i.payload.length])).toEqual([
      ['attachment', 10],
      ['event', 41],
    ]);
    expect(JSON.parse(two.items[1]!.payload.toString())).toEqual({ message: 'hello world', level: 'error' });
    // Without `length`, to the newline; the envelope may end without one.
    const implicit = read('{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc"}\n{"type":"event"}\n{"message":"hi"}');
    expect(payloads(implicit)).toEqual([['event', '{"message":"hi"}']]);
    // Headers alone, with or without the newline; an empty payload.
    expect(read('{}').items).toEqual([]);
    expect(read('{}\n').items).toEqual([]);
    expect(payloads(read('{}\n{"type":"session","length":0}\n'))).toEqual([['session', '']]);
    expect(payloads(read('{}\n{"type":"client_report"}\n\n'))).toEqual([['client_report', '']]);
  });

  it('reads an envelope as @sentry/browser sends it (event and client report, no lengths)', () => {
    const event = { event_id: 'a'.repeat(32), exception: { values: [{ type: 'Error', value: 'boom' }] } };
    const body = [
      JSON.stringify({
        event_id: 'a'.repeat(32),
        sent_at: '2026-11-26T10:00:00.000Z',
        sdk: { name: 'sentry.javascript.browser' },
      }),
      JSON.stringify({ type: 'event' }),
      JSON.stringify(event),
      JSON.stringify({ type: 'client_report' }),
      JSON.stringify({ timestamp: 1, discarded_events: [] }),
    ].join('\n');
    const e = read(body);
    expect(e.items.map((i) => i.type)).toEqual(['event', 'client_report']);
    expect(JSON.parse(e.items[0]!.payload.toString())).toEqual(event);
  });

  it('answers each way an envelope breaks with 400 invalid_request saying where', () => {
    const cases: [string, RegExp][] = [
      ['', /envelope headers are not a line of JSON/],
      ['not json\n', /envelope headers are not a line of JSON/],
      ['[1,2]\n', /envelope headers are not a JSON object/],
      ['{}\n{"type":"event"', /headers of item 1 are not a line of JSON/],
      ['{}\n"event"\n{}', /headers of item 1 are not a JSON object/],
      ['{}\n{"length":2}\n{}', /item 1 has no "type"/],
      ['{}\n{"type":""}\n{}', /item 1 has no "type"/],
      ['{}\n{"type":"event","length":-1}\n', /item 1 has a "length" that is not a whole number/],
      ['{}\n{"type":"event","length":"2"}\n{}', /item 1 has a "length" that is not a whole number/],
      ['{}\n{"type":"event","length":1.5}\n{}', /item 1 has a "length" that is not a whole number/],
      ['{}\n{"type":"event","length":50}\n{}', /item 1 \(event\) declares 50 bytes but 2 follow its headers/],
      ['{}\n{"type":"event","length":1}\n{}', /item 1 \(event\) is not followed by a newline after its 1 bytes/],
      ['{"__proto__":{"x":1}}\n', /envelope headers are not a line of JSON/],
      ['{}\n{"type":"event"}\n{}\n{"type":"event","length":9}\n{}', /item 2 \(event\) declares 9 bytes/],
    ];
    for (const [body, message] of cases) {
      let thrown: unknown;
      try {
        read(body);
      } catch (err) {
        thrown = err;
      }
      expect(thrown, body).toBeInstanceOf(AppError);
      expect((thrown as AppError).code).toBe('invalid_request');
      expect((thrown as AppError).status).toBe(400);
      expect((thrown as AppError).message, body).toMatch(message);
    }
  });
});

describe('bounds', () => {
  it('answers 413 past the item cap, counting dropped items, and keeps nothing of those', () => {
    const items = (count: number) => `{}\n${'{"type":"x","length":0}\n\n'.repeat(count)}`;
    const at = parseEnvelope(Buffer.from(items(3)), { maxItems: 3, keep: () => false });
    expect(at).toEqual({ headers: {}, items: [], count: 3 });
    let thrown: unknown;
    try {
      parseEnvelope(Buffer.from(items(4)), { maxItems: 3 });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({ code: 'invalid_request', status: 413, message: /more than 3 items/ });
  });

  it('steps over blank lines between items without counting them', () => {
    const e = read(`{}\n${'\r\n \n\t\n'.repeat(10_000)}{"type":"event"}\n{}\n\n\n`);
    expect(e.count).toBe(1);
    expect(payloads(e)).toEqual([['event', '{}']]);
  });
});

describe('properties', () => {
  // A `__proto__` key at any depth is refused by design (prototype poisoning): not a round trip.
  const json = fc
    .dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
    .filter((d) => !JSON.stringify(d).includes('"__proto__"'));
  const item = fc.record({
    type: fc.constantFrom('event', 'transaction', 'session', 'attachment', 'client_report', 'x-custom'),
    extra: json,
    payload: fc.uint8Array({ maxLength: 200 }),
    withLength: fc.boolean(),
  });

  it('reads back what was written, item for item', () => {
    fc.assert(
      fc.property(json, fc.array(item, { maxLength: 6 }), fc.boolean(), (headers, items, trailing) => {
        const parts: Buffer[] = [Buffer.from(JSON.stringify(headers))];
        const expected: [string, Buffer][] = [];
        for (const i of items) {
          // Without a length, a payload ends at its first newline: such an item carries no newline.
          const payload = i.withLength ? Buffer.from(i.payload) : Buffer.from(i.payload.filter((b) => b !== 0x0a));
          // `length` is the reader's own header: a random one would make the item malformed by design.
          const { length: _length, ...extra } = i.extra;
          const h = { ...extra, type: i.type, ...(i.withLength ? { length: payload.length } : {}) };
          delete (h as { __proto__?: unknown }).__proto__;
          parts.push(Buffer.from('\n'), Buffer.from(JSON.stringify(h)), Buffer.from('\n'), payload);
          expected.push([i.type, payload]);
        }
        if (trailing) parts.push(Buffer.from('\n'));
        const e = parseEnvelope(Buffer.concat(parts));
        // An item without length whose payload is empty and comes last is still one item.
        expect(e.items.map((i) => [i.type, i.payload])).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('reads any bytes or answers 400 invalid_request, never anything else', () => {
    const envelopeish = fc
      .array(
        fc.oneof(
          fc.constantFrom(
            '{}',
            '{"type":"event"}',
            '{"type":"event","length":3}',
            '\n',
            '{',
            '"',
            'abc',
            '\u0000',
            '\ud800',
          ),
          fc.string({ maxLength: 10 }),
        ),
        { maxLength: 12 },
      )
      .map((parts) => Buffer.from(parts.join('')));
    fc.assert(
      fc.property(
        fc.oneof(
          envelopeish,
          fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
        ),
        (body) => {
          try {
            const e = parseEnvelope(body);
            for (const i of e.items) expect(typeof i.type).toBe('string');
          } catch (err) {
            expect(err).toBeInstanceOf(AppError);
            expect((err as AppError).status).toBe(400);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('reads a body pushed in chunks of any sizes as it reads it whole, and drops what it is told to', () => {
    const body = fc
      .array(
        fc.record({
          type: fc.constantFrom('event', 'attachment', 'session'),
          payload: fc.uint8Array({ maxLength: 100 }),
          withLength: fc.boolean(),
        }),
        { maxLength: 5 },
      )
      .map((items) => {
        const parts = [Buffer.from('{"event_id":"x"}')];
        for (const i of items) {
          const payload = i.withLength ? Buffer.from(i.payload) : Buffer.from(i.payload.filter((b) => b !== 0x0a));
          const h = { type: i.type, ...(i.withLength ? { length: payload.length } : {}) };
          parts.push(Buffer.from(`\n${JSON.stringify(h)}\n`), payload);
        }
        return Buffer.concat(parts);
      });
    fc.assert(
      fc.property(body, fc.array(fc.nat(), { maxLength: 8 }), (whole, cuts) => {
        const expected = parseEnvelope(whole);
        const reader = new EnvelopeReader({ keep: (type) => type === 'event' });
        const points = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b);
        let at = 0;
        for (const p of [...points, whole.length]) {
          reader.push(whole.subarray(at, p));
          at = p;
        }
        const chunked = reader.end();
        expect(chunked.headers).toEqual(expected.headers);
        // Of a dropped item nothing is kept: it is only counted.
        expect(chunked.count).toBe(expected.count);
        expect(chunked.items).toEqual(expected.items.filter((i) => i.type === 'event'));
      }),
      { numRuns: 1000 },
    );
  });
});

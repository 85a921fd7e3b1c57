// A batch body split into items (src/http/json-items.ts) means exactly what the whole body means:
// the same items when it is JSON, "not valid JSON" when it is not, and no split at all for any
// other shape, which then takes the ordinary parser. Golden cases, then properties over random
// values, layouts and byte-level damage.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/app-error.ts';
import { parseWhole, splitJsonItems } from '../../src/http/json-items.ts';
import { toAppError } from '../../src/http/middleware/errors.ts';
import { BodyBudget } from '../../src/http/body-budget.ts';
import { BodyBuffers } from '../../src/http/body-buffers.ts';

const key = 'error_events';
const split = (body: string | Buffer, max = 1000) =>
  splitJsonItems(typeof body === 'string' ? Buffer.from(body) : body, key, max);

/** `fn`, its error as the error middleware answers it. */
const answered = (fn: () => unknown) => (): unknown => {
  try {
    return fn();
  } catch (err) {
    throw toAppError(err);
  }
};

type Outcome = { ok: true; value: unknown } | { ok: false };
const attempt = (fn: () => unknown): Outcome => {
  try {
    return { ok: true, value: answered(fn)() };
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).message).toBe('the request body is not valid JSON');
    return { ok: false };
  }
};

/** What the split items say, against what the whole body says, whenever the body was split. */
async function agrees(body: Buffer): Promise<void> {
  const items = await splitJsonItems(body, key, 1000);
  if (!items) return;
  const fromItems = attempt(() => items.map((i) => i.parse()));
  const whole = attempt(() => parseWhole(body));
  expect(fromItems.ok).toBe(whole.ok);
  if (fromItems.ok && whole.ok) {
    expect(Object.keys(whole.value as object)).toEqual([key]);
    expect(fromItems.value).toEqual((whole.value as Record<string, unknown>)[key]);
  }
}

describe('splitting a batch body', () => {
  it('finds the items of the exact shape, whatever the whitespace, strings and nesting', async () => {
    const body = ' \r\n{ "error_events" :\t[ {"a":"],[{\\"}"} , [1,[2]] ,"x\\\\" , null,{"b":{"c":[]}} ] } \n';
    const items = (await split(body))!;
    expect(items.map((i) => i.parse())).toEqual([{ a: '],[{"}' }, [1, [2]], 'x\\', null, { b: { c: [] } }]);
  });

  it('finds no items in an empty array, and an empty item where a comma leads or trails', async () => {
    expect(await split('{"error_events":[ ]}')).toEqual([]);
    expect((await split('{"error_events":[1,]}'))!.map((i) => i.size)).toEqual([1, 0]);
    const leading = (await split('{"error_events":[,1]}'))!;
    expect(answered(() => leading[0]!.parse())).toThrow(/not valid JSON/);
  });

  it('finds the same items when it gives the event loop back during a large body', async () => {
    const values = Array.from({ length: 300 }, (_, i) => ({ i, text: `"[${'x'.repeat(4000)}]"` }));
    const body = Buffer.from(JSON.stringify({ [key]: values }));
    expect(body.length).toBeGreaterThan(1024 * 1024);
    const items = (await splitJsonItems(body, key, 1000))!;
    expect(items.map((i) => i.parse())).toEqual(values);
    expect(await splitJsonItems(Buffer.concat([body, Buffer.from('x')]), key, 1000)).toBeUndefined();
  });

  it('leaves every other shape to the ordinary parser', async () => {
    for (const body of [
      '',
      '[]',
      '{}',
      '{"error_events":[1],"extra":1}',
      '{"error_events":[1],"error_events":[2]}',
      '{"error\\u005fevents":[1]}',
      '{"error_events":{"0":1}}',
      '{"error_events":[1}',
      '{"error_events":[1]',
      '{"error_events":[1]}x',
      '{"error_events":["unterminated]}',
      '\ufeff{"error_events":[1]}',
    ])
      expect(await split(body), body).toBeUndefined();
  });

  it('refuses a body of more items than the schema allows, once its shape is seen, parsing none', async () => {
    expect(await split('{"error_events":[1,2,3]}', 3)).toHaveLength(3);
    await expect(split('{"error_events":[1,2,3,4]}', 3)).rejects.toMatchObject({
      code: 'invalid_request',
      status: 400,
      details: { fields: [{ field: 'body.error_events', message: 'at most 3 items' }] },
    });
    // Not the exact shape after all: the ordinary parser answers.
    expect(await split('{"error_events":[1,2,3,4],"x":1}', 3)).toBeUndefined();
  });

  it('refuses a body nested or sized past the body limits as it scans', async () => {
    const deep = `{"error_events":[${'['.repeat(63)}${']'.repeat(63)}]}`;
    await expect(split(deep)).rejects.toMatchObject({ status: 400, details: { reason: 'too_deep', max_depth: 64 } });
    expect(await split(`{"error_events":[${'['.repeat(62)}${']'.repeat(62)}]}`)).toHaveLength(1);
    const wide = Buffer.from(`{"error_events":[[${'{},'.repeat(1_000_000)}{}]]}`);
    await expect(split(wide)).rejects.toMatchObject({ status: 413, details: { reason: 'too_many_values' } });
    expect(() => parseWhole(wide)).toThrow(/more than 1000000 objects and arrays/);
    expect(() => parseWhole(Buffer.from(deep))).toThrow(/nested deeper than 64 levels/);
  });

  it('refuses an item with a __proto__ key, as the body parser does', async () => {
    const poisoned = (await split('{"error_events":[{"__proto__":{"x":1}}]}'))!;
    expect(answered(() => poisoned[0]!.parse())).toThrow(/not valid JSON/);
    expect(answered(() => parseWhole(Buffer.from('{"error_events":[{"__proto__":{"x":1}}]}')))).toThrow(
      /not valid JSON/,
    );
  });

  it('decodes broken UTF-8 in an item as the whole body would (U+FFFD)', async () => {
    const body = Buffer.concat([Buffer.from('{"error_events":["a'), Buffer.from([0xe2, 0x82]), Buffer.from('",2]}')]);
    expect((await split(body))!.map((i) => i.parse())).toEqual(['a\ufffd', 2]);
    await agrees(body);
  });

  it('gives the same items as parsing the whole body, for any JSON values in any layout', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.jsonValue(), { maxLength: 20 }),
        fc.constantFrom(undefined, 0, 1, 2, '\t', ' \r\n'),
        async (values, indent) => {
          const body = Buffer.from(JSON.stringify({ [key]: values }, null, indent));
          const items = await splitJsonItems(body, key, 1000);
          expect(items).toHaveLength(values.length);
          await agrees(body);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('agrees with the whole body after any damage to its bytes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.jsonValue(), { minLength: 1, maxLength: 6 }),
        fc.array(
          fc.record({
            at: fc.nat(),
            remove: fc.nat({ max: 3 }),
            insert: fc.uint8Array({ maxLength: 4 }).map((b) => Buffer.from(b)),
          }),
          { minLength: 1, maxLength: 3 },
        ),
        async (values, edits) => {
          let body = Buffer.from(JSON.stringify({ [key]: values }));
          for (const e of edits) {
            const at = e.at % (body.length + 1);
            body = Buffer.concat([body.subarray(0, at), e.insert, body.subarray(at + e.remove)]);
          }
          await agrees(body);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('the budget for large bodies', () => {
  it('lets bodies through in arrival order as bytes are released, and a body larger than all of it alone', async () => {
    const budget = new BodyBudget(10);
    const order: string[] = [];
    const first = await budget.take(6, 1000);
    const second = budget.take(6, 1000).then((r) => (order.push('second'), r));
    const third = budget.take(1, 1000).then((r) => (order.push('third'), r));
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual([]); // the small one waits behind the one that came first
    first();
    (await second)();
    (await third)();
    expect(order).toEqual(['second', 'third']);
    const huge = await budget.take(50, 1000);
    expect(
      await Promise.race([
        budget.take(1, 1000).then(() => 'granted'),
        new Promise((r) => setTimeout(() => r('waiting'), 20)),
      ]),
    ).toBe('waiting');
    huge();
  });

  it('refuses with 429 rate_limited and Retry-After a body that waits too long, and holds nothing for it', async () => {
    const budget = new BodyBudget(10);
    const held = await budget.take(10, 1000);
    const refused = await budget.take(5, 30).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'rate_limited', retryAfter: 1 });
    held();
    const again = await budget.take(10, 30);
    again();
  });
});

describe('reused body buffers', () => {
  const MiB = 1024 * 1024;

  it('lends a large body the buffer the last one gave back, in whole 4 MiB steps, and a small body a new one', () => {
    const pool = new BodyBuffers(24 * MiB);
    const first = pool.lend(19 * MiB + 5);
    expect(first.buffer.length).toBe(19 * MiB + 5);
    first.buffer[0] = 1;
    first.giveBack();
    expect(pool.spareBytes).toBe(20 * MiB);
    const second = pool.lend(18 * MiB); // nearly the same size: the same memory
    expect(second.buffer.length).toBe(18 * MiB);
    expect(second.buffer.buffer).toBe(first.buffer.buffer);
    expect(pool.spareBytes).toBe(0);
    const small = pool.lend(1000);
    small.giveBack();
    expect(pool.spareBytes).toBe(0); // small bodies are never kept
    second.giveBack();
    // A 2 MiB body does not take the 20 MiB buffer away from the next large one.
    const modest = pool.lend(2 * MiB);
    expect(modest.buffer.buffer).not.toBe(first.buffer.buffer);
    modest.giveBack();
  });

  it('keeps at most its capacity spare, dropping the longest unused first', () => {
    const pool = new BodyBuffers(10 * MiB);
    const a = pool.lend(4 * MiB);
    const b = pool.lend(4 * MiB);
    const c = pool.lend(8 * MiB);
    a.giveBack();
    b.giveBack();
    expect(pool.spareBytes).toBe(8 * MiB);
    c.giveBack();
    expect(pool.spareBytes).toBe(8 * MiB); // a and b went, c stays
    expect(pool.lend(8 * MiB).buffer.buffer).toBe(c.buffer.buffer);
  });

  it('gives a buffer back once only, and its items refuse to be read after', async () => {
    const pool = new BodyBuffers(24 * MiB);
    const lease = pool.lend(2 * MiB);
    const body = Buffer.from(`{"error_events":[{"a":1},{"b":2}]}`);
    body.copy(lease.buffer);
    lease.buffer.fill(0x20, body.length); // trailing whitespace is still the same body
    const items = (await splitJsonItems(lease.buffer, key, 1000, lease))!;
    expect(items[0]!.parse()).toEqual({ a: 1 });
    lease.giveBack();
    lease.giveBack();
    expect(pool.spareBytes).toBe(4 * MiB);
    expect(lease.open).toBe(false);
    expect(() => items[1]!.parse()).toThrow(/read after its request ended/);
  });
});

// sentry-cli's chunk upload reads a multipart body in parts, and a request is bounded as a whole:
// past its parts (16 chunks and 8 fields) it is refused with 400 at once, and past its bytes on the
// wire (the 8 MiB of chunks it may carry, and 1 MiB of framing) with 413, whatever the parts are
// named. Parts past the limits, and parts that are not chunks, used to be skipped while the rest of
// the body was read to its end, however long, and the request answered 200. A real upload of one
// chunk is still kept. A refused upload keeps none of its chunks: those written before the refusal
// (a chunk misnamed, one past the limit, one that inflates too far) are removed from the store,
// where they stayed with no row for pruning to find; a chunk an earlier upload holds stays.
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { parseEnvName } from '../../src/domain/tenancy/names.ts';
import { sourceMapBucket } from '../../src/domain/errors/source-maps/uploads.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { createTestEnv, sqlNumber, useWeb } from '../support/harness.ts';

const stack = useWeb();
let env: CreatedEnv;

beforeAll(async () => {
  env = await createTestEnv(stack.h.db);
});

const boundary = 'cairn-test-boundary';

interface Part {
  name: string;
  filename?: string;
  bytes: Buffer;
}

function multipart(parts: Iterable<Part>): Buffer {
  const pieces: Buffer[] = [];
  for (const p of parts) {
    const file = p.filename === undefined ? '' : `; filename="${p.filename}"`;
    pieces.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${file}\r\n\r\n`),
      p.bytes,
      Buffer.from('\r\n'),
    );
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(pieces);
}

/** `chunked`: sent without a Content-Length, so only what arrives can be counted. */
async function upload(body: Buffer, chunked = false) {
  const org = parseEnvName(env.env.name)!.org;
  const res = await fetch(`${stack.web.url}/api/0/organizations/${org}/chunk-upload/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.secretKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: chunked ? new Blob([body]).stream() : body,
    duplex: 'half',
  } as RequestInit);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function* repeat(count: number, part: Part): Generator<Part> {
  for (let i = 0; i < count; i++) yield part;
}

describe('chunk uploads', () => {
  it('refuse a request of more parts than it may hold with 400, whatever the parts are', async () => {
    const fields = await upload(multipart(repeat(10_000, { name: 'x', bytes: Buffer.from('y') })));
    expect(fields).toMatchObject({ status: 400, body: { code: 'invalid_request', message: /form fields/ } });
    const skipped = await upload(multipart(repeat(10_000, { name: 'other', filename: 'a', bytes: Buffer.from('z') })));
    expect(skipped).toMatchObject({ status: 400, body: { code: 'invalid_request', message: /parts per request/ } });
  });

  it('refuse a request larger than its chunks may be on the wire with 413, even in a part that is not a chunk, and keep a real chunk', async () => {
    const body = multipart([{ name: 'other', filename: 'a', bytes: Buffer.alloc(12 * 1024 * 1024, 1) }]);
    for (const chunked of [false, true])
      expect(await upload(body, chunked)).toMatchObject({
        status: 413,
        body: { code: 'invalid_request', message: /larger than/ },
      });
    const bytes = Buffer.from('a real chunk of an artifact bundle');
    const sha1 = createHash('sha1').update(bytes).digest('hex');
    const res = await upload(multipart([{ name: 'file_gzip', filename: sha1, bytes: gzipSync(bytes) }]));
    expect(res).toEqual({ status: 200, body: { chunks: 1 } });
    expect(await sqlNumber(stack.h.db, 'select count(*) from sentry_chunks where sha1 = ?', [sha1])).toBe(1);
  });
});

/** The chunk objects the environment has in the store, by SHA-1. */
const storedChunks = async () =>
  (await createObjectStore(stack.h.config).list(sourceMapBucket(stack.h.config), `sentry-chunks/${env.env.id}/`))
    .map((o) => o.key.split('/').pop()!)
    .sort();
const heldChunks = async () =>
  ((await stack.h.db('sentry_chunks').where({ env_id: env.env.id }).pluck('sha1')) as string[]).sort();

describe('a refused chunk upload', () => {
  const chunk = (text: string) => {
    const bytes = Buffer.from(text);
    return { name: 'file_gzip', filename: createHash('sha1').update(bytes).digest('hex'), bytes: gzipSync(bytes) };
  };

  it('leaves no object of its chunks in the store, keeping those an earlier upload holds', async () => {
    const held = chunk('a chunk kept by an earlier upload');
    expect(await upload(multipart([held]))).toEqual({ status: 200, body: { chunks: 1 } });
    const before = await storedChunks();
    expect(before).toEqual(await heldChunks());
    expect(before).toContain(held.filename);

    // Good chunks, then one that is not what its name says: 400, and the good ones are not kept.
    const misnamed = { ...chunk('these bytes'), filename: 'b'.repeat(40) };
    const named = await upload(multipart([chunk('good chunk 1'), held, chunk('good chunk 2'), misnamed]));
    expect(named).toMatchObject({ status: 400, body: { message: /not named by the SHA-1 of its bytes/ } });
    expect(await storedChunks()).toEqual(before);

    // 16 good chunks and a 17th: the limit refuses the request once 16 were written.
    const many = Array.from({ length: 17 }, (_, i) => chunk(`chunk ${i} of too many`));
    const limited = await upload(multipart(many));
    expect(limited).toMatchObject({ status: 400, body: { message: /at most 16 chunks per request/ } });
    expect(await storedChunks()).toEqual(before);

    // A good chunk, then one that inflates past the chunk size: 413, nothing new kept.
    const bomb = { name: 'file_gzip', filename: 'c'.repeat(40), bytes: gzipSync(Buffer.alloc(5 * 1024 * 1024)) };
    const inflated = await upload(multipart([chunk('good chunk 3'), bomb]), true);
    expect(inflated).toMatchObject({ status: 413, body: { message: /a chunk is larger than/ } });
    expect(await storedChunks()).toEqual(before);
    expect(await heldChunks()).toEqual(before);
  });
});

// Reading a Sentry request body as it streams (docs/api.md "Sentry compatibility"): at most
// 20 MiB on the wire and 100 MiB once decoded (gzip, deflate or br, as the SDKs and relay send
// them), else 413. Decoded bytes go to the caller's sink chunk by chunk, so a body is never held
// whole: an envelope reader keeps only what it needs.
import type { IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { AppError } from '../../../app-error.ts';
import { discardRest } from '../../../http/discard-body.ts';

export const sentryBodyLimits = { compressed: 20 * 1024 * 1024, decoded: 100 * 1024 * 1024 } as const;

const tooLarge = (what: string, max: number) =>
  new AppError('invalid_request', `the request body is larger than ${max / 1024 / 1024} MiB ${what}`, { status: 413 });

function decoder(encoding: string | undefined): Transform | undefined {
  const e = (encoding ?? '').trim().toLowerCase();
  if (e === '' || e === 'identity') return undefined;
  if (e === 'gzip' || e === 'x-gzip') return createGunzip();
  if (e === 'deflate') return createInflate();
  if (e === 'br') return createBrotliDecompress();
  throw new AppError('invalid_request', `unsupported Content-Encoding ${e}: send gzip, deflate, br or none`, {
    status: 415,
  });
}

/**
 * Reads `req` into `sink`, which may make the reading wait by answering a promise. A refusal
 * midway (a limit, a bad key, a malformed envelope) stops the decoding at once, and the rest of
 * the body is dropped unread, up to the wire limit once more (discard-body.ts).
 */
export async function readSentryBody(
  req: IncomingMessage,
  sink: (chunk: Buffer) => void | Promise<void>,
  limits: { compressed: number; decoded: number } = sentryBodyLimits,
): Promise<void> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.compressed) throw tooLarge('as sent', limits.compressed);
  const decode = decoder(req.headers['content-encoding']);
  let wire = 0;
  let decoded = 0;
  const counted = async function* () {
    for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      wire += chunk.length;
      if (wire > limits.compressed) throw tooLarge('as sent', limits.compressed);
      yield chunk;
    }
  };
  const consume = async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) {
      decoded += chunk.length;
      if (decoded > limits.decoded) throw tooLarge('decoded', limits.decoded);
      const waiting = sink(chunk);
      if (waiting) await waiting;
    }
  };
  try {
    if (decode) await pipeline(counted, decode, consume);
    // Not encoded (what most SDKs send): read in place, without a pipeline's streams per request.
    else await consume(counted());
  } catch (err) {
    discardRest(req, limits.compressed);
    throw err;
  }
}

// Reading sentry-cli's chunk upload (docs/api.md "Sentry compatibility", sentry-cli): a
// `multipart/form-data` body whose parts (`file_gzip`, or `file`) are chunks of an artifact
// bundle. The request is bounded as a whole: its bytes on the wire, its parts (chunks and a few
// fields: one past the limit refuses the request at once, rather than being skipped while the rest
// is still read), and its chunks' bytes. What a chunk is and where it is kept is the feature's
// (domain/errors/sentry/cli/chunks.ts); this reads the parts and hands each one over.
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import busboy from 'busboy';
import { AppError } from '../../../app-error.ts';
import { chunkLimits, type ChunkParts, type KeptChunk } from '../../../domain/errors/sentry/cli/chunks.ts';
import { discardRest } from '../../../http/discard-body.ts';

const bad = (message: string, status = 400) => new AppError('invalid_request', message, { status });

/**
 * One part's bytes, gunzipped for `file_gzip`. The inflated bytes are counted as they come and the
 * part is refused as soon as they pass a chunk's size or the request's budget, so a small gzip
 * that inflates to gigabytes costs at most a chunk (the gunzip is destroyed with the loop).
 */
async function readPart(stream: Readable, gzip: boolean, budget: { left: number }): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  const source = gzip ? stream.pipe(createGunzip()) : stream;
  // A part cut short (its request refused) ends the read with its error, whether gunzipped or not.
  if (source !== stream) stream.once('error', (err) => source.destroy(err));
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      size += chunk.length;
      budget.left -= chunk.length;
      if (size > chunkLimits.chunkSize) throw bad(`a chunk is larger than ${chunkLimits.chunkSize} bytes`, 413);
      if (budget.left < 0) throw bad(`the request holds more than ${chunkLimits.maxRequestSize} bytes of chunks`, 413);
      parts.push(chunk);
    }
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('Z_')) throw bad('a file_gzip part does not gunzip');
    throw err;
  }
  return Buffer.concat(parts, size);
}

/**
 * Most bytes a chunk request may have on the wire: its chunks' bytes (sent gzipped, so rarely more
 * than they hold decoded) and the multipart framing around each (a few hundred bytes a part).
 */
const maxWireBytes = chunkLimits.maxRequestSize + 1024 * 1024;

type Keep = Parameters<ChunkParts>[0];

/**
 * Parses `req`, handing each chunk part to `keep` once read; settles when the parser closes or at
 * the first refusal, after which no part is handed over and the rest of the body is dropped unread
 * (discard-body.ts).
 */
function parseParts(req: IncomingMessage, keep: Keep, kept: Promise<KeptChunk>[]): Promise<void> {
  const budget = { left: chunkLimits.maxRequestSize };
  return new Promise<void>((resolve, reject) => {
    const parser = busboy({
      headers: req.headers,
      limits: {
        files: chunkLimits.chunksPerRequest,
        fields: 8,
        fieldSize: 1024,
        parts: chunkLimits.chunksPerRequest + 8,
        headerPairs: 16,
      },
    });
    let wire = 0;
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      req.unpipe(parser);
      req.off('data', count);
      discardRest(req, maxWireBytes);
      // The part being read ends with an error, so that every part has settled before cleanup.
      parser.destroy();
      reject(err);
    };
    const count = (chunk: Buffer) => {
      wire += chunk.length;
      if (wire > maxWireBytes) fail(bad(`the request is larger than ${maxWireBytes} bytes`, 413));
    };
    parser.on('file', (field, stream, info) => {
      if (field !== 'file_gzip' && field !== 'file') {
        stream.on('error', () => undefined).resume();
        return;
      }
      const name = info.filename ?? '';
      const read = readPart(stream, field === 'file_gzip', budget).then((bytes) => {
        if (failed) throw new Error('the request was refused');
        return keep(name, bytes);
      });
      // A refused part refuses the request at once: no chunk after it is kept.
      read.catch((err: unknown) => {
        stream.resume();
        fail(err);
      });
      kept.push(read);
    });
    parser.on('filesLimit', () => fail(bad(`at most ${chunkLimits.chunksPerRequest} chunks per request`)));
    parser.on('fieldsLimit', () => fail(bad('at most 8 form fields per request')));
    parser.on('partsLimit', () => fail(bad(`at most ${chunkLimits.chunksPerRequest + 8} parts per request`)));
    parser.on('error', (err) => fail(bad(`the multipart body does not parse: ${(err as Error).message}`)));
    parser.on('close', resolve);
    req.on('error', fail);
    req.on('data', count);
    req.pipe(parser);
  });
}

/** The chunk parts of `req`, refused at once when it is not multipart or says it is too large. */
export function chunkParts(req: IncomingMessage): ChunkParts {
  if (!/^multipart\/form-data/i.test(req.headers['content-type'] ?? ''))
    throw bad('send the chunks as multipart/form-data parts named file_gzip (or file)');
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxWireBytes)
    throw bad(`the request is larger than ${maxWireBytes} bytes`, 413);
  return async (keep) => {
    const kept: Promise<KeptChunk>[] = [];
    try {
      await parseParts(req, keep, kept);
      return await Promise.all(kept);
    } catch (err) {
      await Promise.allSettled(kept);
      throw err;
    }
  };
}

// The raven-era `/store/` body: base64 of zlib-deflated JSON, sent without Content-Encoding.
// raven-python before 5.6 encoded events so (getsentry/raven-python, raven/base.py `encode`:
// `base64.b64encode(zlib.compress(json))`, dropped in commit a76101f "Dont base64-encode bodies").
// A zlib stream begins with the byte 0x78, whose base64 begins with `e`, which no JSON text can
// begin with: only such a body is read this way, and JSON is read as before.
import { promisify } from 'node:util';
import { inflate } from 'node:zlib';
import { AppError } from '../../../app-error.ts';

const inflateAsync = promisify(inflate);

/** Base64 (RFC 4648 section 4, the standard alphabet, padded or not), whitespace between lines allowed. */
const base64 = /^[A-Za-z0-9+/]+={0,2}$/;

const notRaven = (why: string) =>
  new AppError(
    'invalid_request',
    `the event is not JSON, nor base64 of zlib-compressed JSON (the raven form): ${why}`,
    { details: { reason: 'bad_raven_body' } },
  );

/** Whether `body` (decoded of its Content-Encoding) is in the raven form: its first non-blank byte is `e`. */
export function isRavenBody(body: Buffer): boolean {
  for (const byte of body) {
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d) continue;
    return byte === 0x65; // 'e'
  }
  return false;
}

/**
 * The JSON of a raven-form body, inflated to at most `maxBytes` (else 413, as an event over the
 * limit is refused); bad base64 or a bad zlib stream is 400.
 */
export async function inflateRavenBody(body: Buffer, maxBytes: number): Promise<Buffer> {
  const text = body.toString('latin1').replace(/[\s]+/g, '');
  if (!base64.test(text) || text.length % 4 === 1) throw notRaven('the body is not valid base64');
  const compressed = Buffer.from(text, 'base64');
  try {
    return await inflateAsync(compressed, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      throw new AppError('invalid_request', `the event is larger than ${maxBytes / 1024 / 1024} MiB inflated`, {
        status: 413,
      });
    throw notRaven('its base64 is not a zlib stream');
  }
}

// Captured payloads at rest (docs/api.md: no plaintext secret in any table or queue row).
// An accepted event is raw and unscrubbed (the scrubber runs only when a worker processes it), so it
// is sealed with the service key before it is queued (an `errors.ingest` job, job.ts) and stays
// sealed in the dead-letter queue; a worker opens it only when its turn in a batch comes.
//
// The plaintext is the event's JSON, deflated (raw, level 1) before sealing: ciphertext does not
// compress, so the lz4 TOAST compression the queue would rely on is lost, and the rows would be
// 3x larger in the table and the WAL (measured: 2.3 KB events go to 0.66 KB, and the whole seal +
// INSERT runs at 17-19k events/s against 14-15k uncompressed). Compressing before sealing is what
// the backups already do (gzip, then encrypt); the length it reveals is visible only to someone
// who can read the database, and only per event.
//
// The seal's context (its additional authenticated data) names the row: environment, uid and the
// plain `release` column the worker trusts to pick source maps. A sealed value copied to another
// row, or a row whose release was changed, fails to open. Inflating comes after GCM has proved the
// bytes are ours, so no stranger's deflate stream is ever inflated.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { open, seal, type Keyring } from '../../../crypto.ts';
import { AppError } from '../../../app-error.ts';
import { deflateMemory } from '../deflate.ts';
import type { CapturedEvent } from './captured-event.ts';

/** The plain columns that travel with a sealed payload, and that its seal is bound to. */
export interface SealedPayloadRow {
  uid: string;
  env_id: string;
  release: string | null;
  payload_sealed: string;
}

export const payloadContext = (envId: string, uid: string, release: string | null): string =>
  `error-event:${envId}:${uid}:${release ?? ''}`;

/**
 * The JSON to deflate is written into one reused buffer, and deflate's output comes in 4 KiB
 * chunks instead of its default 16 KiB: buffers outside the V8 heap are freed only by a GC, and a
 * fresh input buffer and a 16 KiB output chunk per event held a web process reading 20 MiB batches
 * tens of MB higher (measured with bench/fairness.ts; the worker's StackEncoder does the same).
 * Sealing is synchronous, so one buffer serves the whole process; larger events get their own.
 * The zlib handle each call makes is freed only by a full GC (Node keeps it reachable until then),
 * which is why the web runs with a smaller heap growing factor (README, Processes).
 */
const scratch = Buffer.allocUnsafe(256 * 1024);

function deflateJson(json: string): Buffer {
  const size = Buffer.byteLength(json);
  const input = size <= scratch.length ? scratch.subarray(0, scratch.write(json)) : Buffer.from(json);
  return deflateRawSync(input, { level: 1, chunkSize: 4096, ...deflateMemory(size) });
}

/** `payload` must already be `storable` (captured-event.ts). */
export function sealPayload(keyring: Keyring, envId: string, uid: string, payload: CapturedEvent): SealedPayloadRow {
  // A string or nothing: the migration seals rows that never passed the capture schema.
  const release = typeof payload.release === 'string' ? payload.release : null;
  return sealPayloadJson(keyring, envId, uid, release, JSON.stringify(payload));
}

/** `sealPayload` of an event already written as JSON (`storableJson`, captured-event.ts). */
export function sealPayloadJson(
  keyring: Keyring,
  envId: string,
  uid: string,
  release: string | null,
  json: string,
): SealedPayloadRow {
  const plaintext = deflateJson(json);
  return { uid, env_id: envId, release, payload_sealed: seal(keyring, plaintext, payloadContext(envId, uid, release)) };
}

/**
 * Why a payload did not open. `permanent`: the value is not this row's (copied, or its row was
 * changed), so no retry can help. Not permanent: its key is not loaded (a rotation that dropped the
 * old key too early), which the operator fixes with CAIRN_ENCRYPTION_OLD_KEYS while retries wait.
 */
export class UnopenablePayload extends Error {
  readonly permanent: boolean;
  constructor(message: string, permanent: boolean) {
    super(message);
    this.name = 'UnopenablePayload';
    this.permanent = permanent;
  }
}

export function openPayload(keyring: Keyring, row: SealedPayloadRow): CapturedEvent {
  let plaintext: Buffer;
  try {
    plaintext = open(keyring, row.payload_sealed, payloadContext(row.env_id, row.uid, row.release));
  } catch (err) {
    if (err instanceof AppError) throw new UnopenablePayload(err.message, false);
    throw new UnopenablePayload(
      'the sealed payload does not belong to this row (copied from another row, or the row was changed)',
      true,
    );
  }
  return JSON.parse(inflateRawSync(plaintext).toString('utf8')) as CapturedEvent;
}

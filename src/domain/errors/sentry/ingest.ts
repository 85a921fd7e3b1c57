// Sentry ingestion (docs/api.md "Sentry compatibility"): as thin as capture. The route has checked
// the client key (or, for an envelope whose key is only in its `dsn` header, hands over the means
// to check it); read the body as it streams (the route's reader) keeping only event items, map
// each event to a capture (event.ts), count it against the key's rate limit, and accept it: sealed
// and queued like any capture, so the worker's pipeline (symbolication, scrubbing, grouping) is the
// same. The SDK's event id is the capture's idempotency key, so an SDK's retry stores nothing
// twice; it is claimed when the event is stored, since the answer is that id either way
// (capture.ts `ClaimAt`).
import { randomBytes } from 'node:crypto';
import { AppError } from '../../../app-error.ts';
import { isHexId } from '../../../ids.ts';
import { acceptEvents, type CaptureDeps } from '../intake/capture.ts';
import { consumeKeyLimit, keyFromDsn, type ClientKeyGrant } from './auth.ts';
import { EnvelopeReader } from './envelope.ts';
import { fromSentryEvent, parseSentryJson, type SentryEventInput } from './event.ts';
import { readLegacyEvent } from './legacy.ts';
import { inflateRavenBody, isRavenBody } from './raven-body.ts';

/** An event item (or a store body) larger than this is refused with 413, as relay refuses it. */
export const maxEventBytes = 1024 * 1024;

/**
 * Reads the request's body into `sink` as it streams, decoded, within `limits` (the route's
 * reader: its wire and decoded bounds unless `limits` is given); `sink` may make it wait.
 */
export type SentryBodyReader = (
  sink: (chunk: Buffer) => void | Promise<void>,
  limits?: { compressed: number; decoded: number },
) => Promise<void>;

/**
 * The request's client key as its route checked it (the kernel's `client-key` auth, through
 * `authenticateClientKey`): the key of the query or `X-Sentry-Auth`, checked before the body is
 * read; without one, `resolve` checks the key an envelope names in its `dsn` header, for the path's
 * project (undefined: no key at all, 401).
 */
export interface SentryKeyAuth {
  key: ClientKeyGrant | undefined;
  resolve(fromBody?: string): Promise<ClientKeyGrant>;
}

export interface SentryRequest {
  read: SentryBodyReader;
  auth: SentryKeyAuth;
}

const eventIdOf = (input: SentryEventInput): string => (input.event_id ??= randomBytes(16).toString('hex'));

/**
 * Most items an envelope may hold, kept or dropped; more is 413. Relay caps items per type far
 * lower (30 attachments, 100 sessions, 100 client reports, 25 standalone spans: its config's
 * `limits`), so no SDK sends more than a few hundred; 1000 is batchCapture's own cap per request.
 */
export const maxEnvelopeItems = 1000;

/** POST /api/{n}/envelope/: the id of the envelope's event, or of the envelope when it holds none. */
export async function ingestEnvelope(deps: CaptureDeps, r: SentryRequest): Promise<{ id: string | null }> {
  // A key in the query or header was checked before the body was read: a wrong one costs nothing.
  let key = r.auth.key;
  // One event per envelope, as relay reads them: what a request holds is then one event (1 MiB).
  let events = 0;
  const keep = (type: string) => {
    if (type !== 'event') return false;
    if (++events > 1) throw new AppError('invalid_request', 'malformed envelope: it holds more than one event item');
    return true;
  };
  const reader = new EnvelopeReader({ keep, maxKept: maxEventBytes, maxLine: 64 * 1024, maxItems: maxEnvelopeItems });
  // A key named only in the envelope header (a tunnel's `dsn`) is checked as soon as that first
  // line is read, before anything after it: an unknown key costs one line, not the envelope.
  const untilKeyed = async (chunk: Buffer) => {
    const nl = chunk.indexOf(0x0a);
    reader.push(nl < 0 ? chunk : chunk.subarray(0, nl + 1));
    if (nl < 0) return;
    key = await r.auth.resolve(keyFromDsn(reader.headers?.dsn));
    reader.push(chunk.subarray(nl + 1));
  };
  await r.read((chunk) => (key ? reader.push(chunk) : untilKeyed(chunk)));
  const envelope = reader.end();
  key ??= await r.auth.resolve(keyFromDsn(envelope.headers.dsn));
  const now = new Date();
  const headerId = typeof envelope.headers.event_id === 'string' ? envelope.headers.event_id : undefined;
  const inputs = envelope.items.map((i, n) =>
    fromSentryEvent(readLegacyEvent(parseSentryJson(i.payload, `payload of event item ${n + 1}`)), now, headerId),
  );
  // An event without `contexts.trace` keeps the envelope's trace (its dynamic sampling context).
  const traceId = (envelope.headers.trace as { trace_id?: unknown } | null | undefined)?.trace_id;
  if (typeof traceId === 'string' && isHexId(traceId, 32)) for (const input of inputs) input.trace_id ??= traceId;
  await consumeKeyLimit(deps.db, key, inputs.length);
  const ids = inputs.map(eventIdOf);
  await acceptEvents(deps, key.envId, inputs, 'store');
  return { id: ids[0] ?? headerId?.replace(/-/g, '').toLowerCase() ?? null };
}

/** POST /api/{n}/store/: one event as the body (the SDKs before envelopes), JSON or raven's base64 form. */
export async function ingestStore(deps: CaptureDeps, r: SentryRequest): Promise<{ id: string }> {
  const key = await r.auth.resolve();
  const parts: Buffer[] = [];
  await r.read((chunk) => void parts.push(Buffer.from(chunk)), {
    compressed: maxEventBytes,
    decoded: maxEventBytes,
  });
  if (parts.length === 0) throw new AppError('invalid_request', 'the body is empty: send the event as JSON');
  let body: Buffer = Buffer.concat(parts);
  // Inflated within the event's limit, then depth-checked and parsed as any event (raven-body.ts).
  if (isRavenBody(body)) body = await inflateRavenBody(body, maxEventBytes);
  const input = fromSentryEvent(readLegacyEvent(parseSentryJson(body, 'event')), new Date());
  await consumeKeyLimit(deps.db, key, 1);
  const id = eventIdOf(input);
  await acceptEvents(deps, key.envId, [input], 'store');
  return { id };
}

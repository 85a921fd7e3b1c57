// Standard Webhooks signatures (https://www.standardwebhooks.com, "Signature scheme"): the secret is
// `whsec_` and the standard base64 of its key bytes; a signature is `v1,` and the base64 of
// HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}`, keyed by those bytes. Several
// signatures (a rotation's new and old secret) are separated by spaces, and a receiver accepts the
// message when any one verifies.
import { createHmac, randomBytes } from 'node:crypto';

const prefix = 'whsec_';

/** A new secret: 32 random bytes (the spec asks for 24 to 64). */
export function newSecret(): string {
  return `${prefix}${randomBytes(32).toString('base64')}`;
}

export function secretKey(secret: string): Buffer {
  if (!secret.startsWith(prefix)) throw new Error('a webhook secret starts with whsec_');
  return Buffer.from(secret.slice(prefix.length), 'base64');
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three headers of one attempt: `timestamp` is this attempt's time in unix seconds. */
export function signMessage(secrets: readonly string[], id: string, timestamp: number, body: string): SignedHeaders {
  const signed = `${id}.${timestamp}.${body}`;
  const signatures = secrets.map((s) => `v1,${createHmac('sha256', secretKey(s)).update(signed).digest('base64')}`);
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatures.join(' ') };
}

// Sign in with Apple authenticates the client with a JWT instead of a fixed secret: ES256, signed
// with the developer's key (kid = its Key ID), iss = Team ID, sub = the Services ID (client_id),
// aud = https://appleid.apple.com, and at most six months of life (Apple, "Creating a client
// secret"). We make a fresh one of five minutes for every token request.
import { createPrivateKey, sign } from 'node:crypto';
import { AppError } from '../../app-error.ts';

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

export function checkApplePrivateKey(pem: string): void {
  try {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
      throw new Error('not P-256');
  } catch {
    throw new AppError(
      'invalid_request',
      "apple.private_key must be the .p8 key from Apple's developer site (PEM, EC P-256)",
    );
  }
}

export function appleClientSecret(
  input: { teamId: string; keyId: string; clientId: string; privateKeyPem: string; audience: string },
  now: number = Date.now(),
): string {
  const iat = Math.floor(now / 1000);
  const head = b64url({ alg: 'ES256', kid: input.keyId, typ: 'JWT' });
  const body = b64url({ iss: input.teamId, iat, exp: iat + 300, aud: input.audience, sub: input.clientId });
  // JWS wants the raw r‖s signature (RFC 7518 §3.4), not DER.
  const signature = sign('sha256', Buffer.from(`${head}.${body}`), {
    key: createPrivateKey(input.privateKeyPem),
    dsaEncoding: 'ieee-p1363',
  });
  return `${head}.${body}.${signature.toString('base64url')}`;
}

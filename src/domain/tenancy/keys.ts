// API keys (docs/api.md "Keys and authentication"): `cairn_pk_{test|live}_<base62>` publishable,
// `cairn_sk_{test|live}_<base62>` secret. 32 base62 characters carry ~190 bits of entropy.
import { randomBase62, sha256 } from '../../crypto.ts';

export const secretScopes = [
  'auth:read',
  'auth:write',
  'observability:read',
  'observability:write',
  'backups:read',
  'backups:write',
  'storage:read',
  'storage:write',
  'webhooks:read',
  'webhooks:write',
] as const;
export type SecretScope = (typeof secretScopes)[number];
export type Scope = SecretScope | 'auth:public';
export type KeyKind = 'publishable' | 'secret';
export type EnvMode = 'test' | 'live';

const keyPattern = /^cairn_(pk|sk)_(test|live)_([0-9A-Za-z]{32,128})$/;

export function generateKey(kind: KeyKind, mode: EnvMode): string {
  return `cairn_${kind === 'secret' ? 'sk' : 'pk'}_${mode}_${randomBase62(32)}`;
}

export function parseKey(token: string): { kind: KeyKind; mode: EnvMode } | null {
  const m = keyPattern.exec(token);
  if (!m) return null;
  return { kind: m[1] === 'sk' ? 'secret' : 'publishable', mode: m[2] as EnvMode };
}

export const hashKey = (token: string): Buffer => sha256(token);

/** A non-secret reminder of a key for lists: its prefix and last four characters. */
export function keyHint(token: string): string {
  return `${token.slice(0, token.lastIndexOf('_') + 1)}…${token.slice(-4)}`;
}

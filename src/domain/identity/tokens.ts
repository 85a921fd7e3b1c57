// Opaque bearer secrets. Each is 32 base62 characters (~190 bits, above the 128 bits OWASP's
// Session Management Cheat Sheet asks for) behind a recognisable prefix, so secret scanners and
// people can tell them apart. Only SHA-256 of a token is stored (docs/conventions.md "Secrets").
import { randomBase62, sha256 } from '../../crypto.ts';

export type TokenKind = 'session' | 'ticket' | 'email' | 'console_session' | 'console_link';

const prefixes: Record<TokenKind, string> = {
  session: 'cairn_sess_',
  ticket: 'cairn_tkt_',
  email: 'cairn_eml_',
  // The console's (a team member's sign-in, domain/console): its cookie, and its one-use links.
  console_session: 'cairn_csess_',
  console_link: 'cairn_clink_',
};

export function newToken(kind: TokenKind): string {
  return `${prefixes[kind]}${randomBase62(32)}`;
}

export function isTokenShape(kind: TokenKind, value: string): boolean {
  return new RegExp(`^${prefixes[kind]}[0-9A-Za-z]{32}$`).test(value);
}

export const hashToken = (token: string): Buffer => sha256(token);

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

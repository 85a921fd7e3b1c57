// The warnings a refused guarded owner change raises (role-filter.ts), read out of psql's stderr.
// Each restore draws its own nonce, handed to the zlib child with the roles (never through the
// server), so a tenant's function raising a WARNING of the same shape during the restore cannot
// pass for one: it does not know the nonce. The role comes as hex, so no name can end the line.
import { randomBytes } from 'node:crypto';

export interface OwnerWarnings {
  nonce: string;
  /** Takes psql's stderr text, returns it without Cairn's warnings, counting their roles. */
  take(text: string): string;
  roles(): string[];
}

export function ownerWarnings(): OwnerWarnings {
  const nonce = randomBytes(16).toString('hex');
  const line = new RegExp(`^[^\\n]*WARNING: {2}cairn-left-out-owner:${nonce}:([0-9a-f]*)\\n`, 'gm');
  const roles: string[] = [];
  return {
    nonce,
    take: (text) =>
      text.replace(line, (_line, hex: string) => {
        roles.push(Buffer.from(hex, 'hex').toString('utf8'));
        return '';
      }),
    roles: () => roles,
  };
}

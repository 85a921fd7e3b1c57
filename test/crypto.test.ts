// Sealing (src/crypto.ts): AES-256-GCM with a random 96-bit nonce per value.
import { describe, expect, it } from 'vitest';
import { open, seal } from '../src/crypto.ts';

describe('seal', () => {
  it('draws a fresh nonce for every value, across pool refills', async () => {
    const keyring = { currentId: 'k1', keys: new Map([['k1', Buffer.alloc(32, 9)]]) };
    const nonces = new Set<string>();
    // 1,000 seals: three refills of the 4 KiB nonce pool.
    for (let i = 0; i < 1000; i++) {
      const sealed = seal(keyring, `value ${i}`, 'ctx');
      nonces.add(sealed.split('.')[2]!);
      expect(open(keyring, sealed, 'ctx').toString()).toBe(`value ${i}`);
    }
    expect(nonces.size).toBe(1000);
  });
});

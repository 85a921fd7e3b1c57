// Which addresses the service may connect to on a client's behalf (server-side request forgery,
// OWASP SSRF Prevention Cheat Sheet): public unicast only, wherever egress/target-rule.ts asks for
// it. Social providers (domain/social/egress.ts) and webhook targets (domain/webhooks/targets.ts)
// both use it, at set-up (resolvePublic) and where each socket opens (guardedLookup: the DNS answer
// it connects to, so a name that resolves differently the second time, DNS rebinding, gains
// nothing). A refusal's message is the same whatever the host and its addresses (hostRefused).
import type { LookupAddress, LookupOptions } from 'node:dns';
import { Resolver as DnsResolver } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const notPublic = new BlockList();
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are checked against these IPv4 rules by BlockList.
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  notPublic.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d
  ['::ffff:0:0:0', 96], // SIIT's IPv4-translated addresses (RFC 6052 §2.1)
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32], // Teredo: tunnels to an IPv4 address
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8],
] as const)
  notPublic.addSubnet(network, prefix, 'ipv6');

/** A public unicast address: not loopback, private, link-local, CGNAT, documentation, multicast or NAT64. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return !notPublic.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** A host's addresses. */
export type Resolver = (host: string) => Promise<string[]>;

// c-ares queries with a deadline, not getaddrinfo (dns.lookup): that holds one of libuv's four
// threads for as long as a name's server takes to answer (tens of seconds for one that never does),
// and those threads also hash passwords. A key holder choosing such names could starve sign-ins.
// It does not read /etc/hosts: `localhost` does not resolve here (tests pass their own Resolver).
const dns = new DnsResolver({ timeout: 2000, tries: 2 });

/** DNS with a 2 s deadline per query, for names a client chose. Its error names no host. */
export const deadlineResolver: Resolver = async (host) => {
  const answers = await Promise.allSettled([dns.resolve4(host), dns.resolve6(host)]);
  const addresses = answers.flatMap((a) => (a.status === 'fulfilled' ? a.value : []));
  if (addresses.length > 0) return addresses;
  const failed = answers.find((a) => a.status === 'rejected')?.reason as NodeJS.ErrnoException | undefined;
  throw Object.assign(new Error('no address found'), { code: failed?.code ?? 'ENOTFOUND' });
};

/** A connection refused by this rule; its message names neither the host nor the address found. */
export class AddressRefused extends Error {
  override readonly name: string = 'AddressRefused';
}

/**
 * The one reason for every host refused where only public addresses are allowed: one that does not
 * resolve (or whose DNS failed, or timed out) reads as one that resolves to a private address.
 * Inside the service's network its own names resolve (postgres, s3, metadata.google.internal)
 * where elsewhere they do not, so telling the two apart would let a key holder map them.
 */
export const hostRefused = 'the host must resolve, and only to public addresses';

/**
 * The addresses of `host` (a name, or a literal without brackets) when every one passes `allowed`;
 * else AddressRefused (hostRefused, whatever the reason).
 */
export async function resolvePublic(
  host: string,
  resolve: Resolver,
  allowed: (address: string) => boolean = isPublicAddress,
): Promise<string[]> {
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await resolve(host);
  } catch {
    throw new AddressRefused(hostRefused);
  }
  if (addresses.length === 0 || !addresses.every(allowed)) throw new AddressRefused(hostRefused);
  return addresses;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * dns.lookup for sockets (an Agent's `lookup`; Node calls none for a literal address): the DNS
 * answer the socket connects to, refused unless every address passes `allowed`. A DNS failure is
 * refused alike (hostRefused): the attempt fails, as any failed connection does, and is retried
 * where its caller retries.
 */
export function guardedLookup(resolve: Resolver, allowed: (address: string) => boolean = isPublicAddress) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const refuse = () => callback(new AddressRefused(hostRefused), []);
    resolve(hostname).then((addresses) => {
      if (addresses.length === 0 || !addresses.every(allowed)) return refuse();
      const all = addresses.map((address) => ({ address, family: isIP(address) }));
      if (options.all) callback(null, all);
      else callback(null, all[0]!.address, all[0]!.family);
    }, refuse);
  };
}

// Which addresses the service may connect to on a client's behalf (server-side request forgery,
// OWASP SSRF Prevention Cheat Sheet; CONTRACT.md "Webhooks", "Target addresses"): public unicast
// only. Social providers of live environments (domain/social/egress.ts) and webhook targets of
// live environments (domain/webhooks/targets.ts) both use it.
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

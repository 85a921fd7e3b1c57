// Who is asking: the client's address and its user agent, both bounded. Every per-address limit
// keys on the address and sessions and sign-in history record it, so it is never a header's
// text as written: it is the X-Forwarded-For entry CAIRN_TRUSTED_PROXY_HOPS from the right (Koa's
// ctx.ips, set up in src/app/app.ts) when that entry is an IP address, else the socket's address.
// An entry that is not an address came from no proxy we trust (each writes the address it was
// reached from), so it says nothing about the client.
import { isIP } from 'node:net';
import type { Context } from 'koa';

/** User agents are stored as sent, up to this many characters. */
export const userAgentMax = 500;

/**
 * The one text of an IP address, or undefined when `text` is not one. Only plain addresses are
 * taken (no port, no brackets: X-Forwarded-For as Heroku's router, nginx, HAProxy and the cloud
 * load balancers write it) and no IPv6 zone (`%eth0`, meaningless beyond the host that wrote it,
 * and of any length). IPv6 is written as RFC 5952 says (lower case, zeros compressed, by the URL
 * parser), and an IPv4-mapped one (::ffff:203.0.113.7) as the IPv4 address it is, so that one
 * client is one key however its address was written. At most 39 characters.
 */
export function canonicalIp(text: string): string | undefined {
  const kind = isIP(text);
  if (kind === 4) return text; // node:net takes only dotted decimal without leading zeros
  if (kind !== 6 || text.includes('%')) return undefined;
  const v6 = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v6);
  if (!mapped) return v6;
  const [hi, lo] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** The client's address (see the top of this file); `unknown` only when the socket is already gone. */
export function clientAddress(ctx: Context): string {
  const forwarded = ctx.request.ips[0];
  const fromProxy = forwarded === undefined ? undefined : canonicalIp(forwarded);
  // A link-local peer's zone names our own interface, not the client.
  return fromProxy ?? canonicalIp((ctx.socket.remoteAddress ?? '').replace(/%.*$/, '')) ?? 'unknown';
}

export function clientFrom(ctx: Context): { ip: string; userAgent: string | null } {
  return { ip: clientAddress(ctx), userAgent: ctx.get('user-agent').slice(0, userAgentMax) || null };
}

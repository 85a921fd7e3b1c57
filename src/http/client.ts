// Who is asking: the client's address (ctx.ip, which trusts X-Forwarded-For only as far as
// CAIRN_TRUSTED_PROXY_HOPS says, src/api/app.ts) and its user agent, bounded. Every per-address
// limit keys on this, never on a header the client writes.
import type { Context } from 'koa';

export function clientFrom(ctx: Context): { ip: string; userAgent: string | null } {
  return { ip: ctx.ip || 'unknown', userAgent: ctx.get('user-agent').slice(0, 500) || null };
}

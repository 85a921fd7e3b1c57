// How a request carries its API key (docs/api.md "Keys and authentication"): a secret key as
// `Authorization: Bearer`, a publishable key as the Cairn-Publishable-Key header or the
// publishable_key query parameter. No key, or a malformed Authorization header, is unauthorized;
// what the key is worth is the app's to say (KernelHooks.key). Nothing is read before this passes.
import type { Context } from 'koa';
import { AppError } from '../../app-error.ts';
import type { AppDeps, Principal } from '../context.ts';
import type { KernelHooks, KeyKind } from '../hooks.ts';

function bearer(ctx: Context): string | undefined {
  const header = ctx.get('authorization');
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw new AppError('unauthorized', 'the Authorization header must be "Bearer <key>"');
  return m[1];
}

function publishable(ctx: Context): string | undefined {
  const fromQuery = ctx.query.publishable_key;
  const value = ctx.get('cairn-publishable-key') || (typeof fromQuery === 'string' ? fromQuery : undefined);
  return value || undefined;
}

export async function authenticate(
  ctx: Context,
  deps: AppDeps,
  hooks: KernelHooks,
  kind: KeyKind,
  scope?: string,
): Promise<Principal> {
  const token = kind === 'secret' ? bearer(ctx) : publishable(ctx);
  if (!token) {
    throw new AppError(
      'unauthorized',
      kind === 'secret'
        ? 'no API key: send "Authorization: Bearer <secret key>"'
        : 'no publishable key: send it as the publishable_key query parameter or the Cairn-Publishable-Key header',
    );
  }
  return hooks.key(deps, token, kind, scope);
}

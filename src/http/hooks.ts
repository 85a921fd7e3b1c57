// What the route kernel asks of the app: it knows how a request carries its credentials (an
// Authorization bearer, a publishable key, a Sentry client key) and how errors are answered, but
// not what a key or a session is, which scopes exist or how an environment is named. The app
// composition (src/app/) hands the feature code's answers in when it mounts the routes.
import type { Context, Middleware } from 'koa';
import type { AppDeps, ClientKeyPrincipal, Principal, SessionPrincipal } from './context.ts';
import type { ConsolePrincipal } from './pages.ts';

export type KeyKind = 'publishable' | 'secret';

export interface KernelHooks {
  /**
   * The principal of an API key's token, for a route of auth `kind` needing `scope`; throws an
   * AppError (`unauthorized`: malformed, unknown, revoked; `forbidden`: wrong kind or scope).
   */
  key(deps: AppDeps, token: string, kind: KeyKind, scope?: string): Promise<Principal>;
  /**
   * The Sentry client key `publicKey` (`auth: 'client-key'`), live and of the DSN project
   * `projectNumber`; throws an AppError (`unauthorized`: none, malformed, unknown, revoked;
   * `forbidden`: another project's).
   */
  clientKey(deps: AppDeps, projectNumber: string, publicKey: string | undefined): Promise<ClientKeyPrincipal>;
  /** The principal of a session bearer's token, or undefined when no live session has it. */
  session(ctx: Context, deps: AppDeps, token: string): Promise<SessionPrincipal | undefined>;
  /** Every scope a route may require: a route naming another is refused when it is mounted. */
  scopes: readonly string[];
  /** The name of the environment a path's `{org}`, `{project}` and `{env}` name (a key's `envName`). */
  envName(path: { org: string; project: string; env: string }): string;
  /** The live console session of the request's cookie (`auth: 'console'`); undefined for none, or one that ended. */
  console(ctx: Context, deps: AppDeps): Promise<ConsolePrincipal | undefined>;
  /** Answers the errors of routes declared `errors: 'oauth'` (RFC 6749 §5.2). */
  oauthErrors: Middleware;
}

// The route kernel. A route is declared once, with its zod schemas; the same declaration mounts it
// on the router, authenticates, validates the request, and describes it in the OpenAPI document
// (logto's koaGuard, Outline's validate). Handlers stay short: they get parsed input and return
// the response body. Every HTTP surface is declared this way: the /v1 API (JSON bodies, the /v1
// error body), the OAuth endpoints (form bodies, RFC 6749 errors), the social callback, the
// Account Portal's pages and the console's (forms, errors as HTML pages, CSRF-checked posts).
import { trace } from '@opentelemetry/api';
import type { Router, RouterMiddleware } from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import { itemsBody } from './middleware/items-body.ts';
import { jsonBody } from './middleware/json-body.ts';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import { AppError } from '../app-error.ts';
import type { AppDeps, ClientKeyAuth, Principal, RequestState, SessionPrincipal } from './context.ts';
import type { KernelHooks } from './hooks.ts';
import { authenticate } from './middleware/auth.ts';
import { authenticateClientKey, type ClientKeyFrom } from './middleware/client-key.ts';
import { authenticateSession } from './middleware/session-auth.ts';
import { consolePrincipal, formChecks, pageErrors, type ConsolePrincipal, type RouteState } from './pages.ts';
import { validateInput } from './validate.ts';

export type { ConsolePrincipal } from './pages.ts';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type AuthKind = 'none' | 'publishable' | 'secret' | 'session' | 'console' | 'client-key';
/** How the body arrives: JSON (the /v1 default), or form-encoded (OAuth, RFC 6749 §3.2; HTML forms). */
export type BodyType = 'json' | 'form';

/** Errors of a route answered as an HTML page: a 4xx AppError becomes the page `page` renders. */
export interface PageErrors {
  page(ctx: Context, err: AppError, deps: AppDeps): void;
}

/**
 * How a route answers errors: `api`, the /v1 body of the app's error middleware (docs/api.md
 * "Errors"); `oauth`, RFC 6749 §5.2's `{error, error_description}` (KernelHooks.oauthErrors); or
 * pages.
 */
export type ErrorStyle = 'api' | 'oauth' | PageErrors;

type Schema = z.ZodType;
type Infer<S> = S extends z.ZodType ? z.infer<S> : undefined;

export type { SessionPrincipal };

/**
 * What a route's auth kind yields: nothing for public routes, the key or the session otherwise; a
 * Sentry client key (`client-key`) with its resolver for a key the body names (client-key.ts).
 */
export type PrincipalFor<A extends AuthKind> = A extends 'none'
  ? undefined
  : A extends 'session'
    ? SessionPrincipal
    : A extends 'console'
      ? ConsolePrincipal
      : A extends 'client-key'
        ? ClientKeyAuth
        : Principal;

export interface HandlerInput<P, Q, B, A extends AuthKind = AuthKind> {
  params: Infer<P>;
  query: Infer<Q>;
  body: Infer<B>;
  principal: PrincipalFor<A>;
  deps: AppDeps;
  ctx: Context & { state: RequestState };
}

export interface RouteDef<
  P extends Schema | undefined = Schema | undefined,
  Q extends Schema | undefined = Schema | undefined,
  B extends Schema | undefined = Schema | undefined,
  R extends Schema = Schema,
  A extends AuthKind = AuthKind,
> {
  method: Method;
  /** OpenAPI form: `/v1/orgs/{org}/…/error_groups:capture`. */
  path: string;
  operationId: string;
  summary: string;
  tags: readonly string[];
  auth: A;
  /** Of the app's scopes (KernelHooks.scopes). */
  scope?: string;
  /**
   * `auth: 'client-key'`: the path parameter naming the DSN's project, and where the key may come
   * from (`request`: the query or the auth header; `request-or-body`: also what the body names,
   * which the handler checks through `principal.resolve`).
   */
  clientKey?: { projectParam: string; keyFrom: ClientKeyFrom };
  /** A page's form post: its `csrf` field must be the page's token (pages.ts, csrf.ts). */
  csrf?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /** A body the route takes, for the OpenAPI document (checked against `body` by the tests). */
  example?: B extends Schema ? z.input<B> : never;
  /** Bytes; docs/api.md: 100 KiB unless a route says otherwise. */
  bodyLimit?: number;
  /** `json` unless said. A form route parses its body whenever one comes, declared or not. */
  bodyType?: BodyType;
  /** `api` unless said. */
  errors?: ErrorStyle;
  /** The body is free text stored as sent: its schema replaces what Postgres cannot store (unstorable.ts). */
  freeText?: boolean;
  /**
   * The body is `{"<key>": [item, …]}` of at most `max` items, large: read within the process's
   * budget for large bodies and handed over as `JsonItem`s that the handler parses one at a time
   * (json-items.ts), so it can give the event loop back between them.
   */
  bodyItems?: { key: string; max: number };
  /**
   * `type`: JSON unless said; `html` for a page; `css` for a stylesheet; `redirect` for a route
   * that sends the browser on; `empty` for an answer without a body (204), whose handler returns nothing.
   */
  response: { status: number; description: string; schema: R; type?: 'json' | 'html' | 'css' | 'redirect' | 'empty' };
  handle(input: HandlerInput<P, Q, B, A>): Promise<z.input<R>> | z.input<R>;
}

export function defineRoute<
  P extends Schema | undefined,
  Q extends Schema | undefined,
  B extends Schema | undefined,
  R extends Schema,
  A extends AuthKind,
>(def: RouteDef<P, Q, B, R, A>): RouteDef {
  return def as unknown as RouteDef;
}

export const defaultBodyLimit = 100 * 1024;

const formBody = (limit: number): Middleware =>
  bodyParser({ enableTypes: ['form'], formLimit: limit, encoding: 'utf-8' }) as Middleware;

/** A body sent to a form route must be form-encoded: a JSON one is a client's mistake, said so. */
const formOnly: Middleware = async (ctx, next) => {
  if (ctx.request.length && !ctx.is('application/x-www-form-urlencoded')) {
    throw new AppError('invalid_request', 'send the parameters as application/x-www-form-urlencoded');
  }
  await next();
};

/**
 * `/v1/envs/{env}/x:verb` → `/v1/envs/:env/x\:verb` for path-to-regexp v8. A final slash is left to
 * the router, which (not strict) takes every path with or without one: Sentry's `/api/{n}/envelope/`
 * answers bare too, as Sentry's own does, while the OpenAPI document keeps the declared path.
 */
export function koaPath(path: string): string {
  return path
    .replace(/(.)\/$/, '$1')
    .replace(/:/g, '\\:')
    .replace(/\{(\w+)\}/g, ':$1');
}

/** Keys of one environment never reach another's data: the path's env must be the key's. */
function checkEnvScope(hooks: KernelHooks, params: Record<string, string>, principal: Principal | undefined): void {
  if (!principal || params.org === undefined || params.project === undefined || params.env === undefined) return;
  const named = hooks.envName({ org: params.org, project: params.project, env: params.env });
  if (named !== principal.envName) {
    throw new AppError('forbidden', `this key belongs to ${principal.envName}, not ${named}`);
  }
}

/**
 * A response that does not match its declared schema is a bug of ours, and the OpenAPI document
 * would lie about it: with `checkResponses` (on under tests) it fails the request with a 500 that
 * names the route and the fields, instead of reaching a client.
 */
function checkResponse(def: RouteDef, result: unknown): void {
  const parsed = def.response.schema.safeParse(result);
  const fields = parsed.success
    ? undeclared(result, parsed.data).map((path) => `${path}: not in the schema`)
    : parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`);
  if (fields.length === 0) return;
  throw new Error(
    `the answer of ${def.operationId} does not match its response schema: ${fields.slice(0, 5).join('; ')}`,
  );
}

/** Fields of an answer its schema does not declare (zod drops them from `parsed`): the document would hide them. */
function undeclared(answer: unknown, parsed: unknown, path = ''): string[] {
  if (Array.isArray(answer) && Array.isArray(parsed))
    return answer.flatMap((v, i) => undeclared(v, parsed[i], `${path}[${i}]`));
  if (!isPlainObject(answer) || !isPlainObject(parsed)) return [];
  return Object.entries(answer).flatMap(([k, v]) => {
    const at = path ? `${path}.${k}` : k;
    if (v === undefined) return [];
    return k in parsed ? undeclared(v, parsed[k], at) : [at];
  });
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

function handlerFor(def: RouteDef, deps: AppDeps, checkResponses: boolean): Middleware {
  return async (ctx) => {
    const principal = (ctx.state as RouteState).principal;
    const { params, query, body } = validateInput(def, ctx);
    const result = await def.handle({ params, query, body, principal, deps, ctx } as HandlerInput<
      Schema,
      Schema,
      Schema
    >);
    // Routes that answer themselves (a download stream, a redirect, a page) return nothing and
    // keep the status they set.
    if (result === undefined) {
      if (def.response.type === 'empty') ctx.status = def.response.status;
      return;
    }
    if (checkResponses) checkResponse(def, result);
    ctx.status = def.response.status;
    ctx.body = result;
  };
}

/**
 * Names the request's server span (when traced) after the route template, as OpenTelemetry's HTTP
 * conventions ask: `POST /v1/orgs/{org}/…`, never the concrete path with its ids.
 */
function nameSpan(def: RouteDef): Middleware {
  const route = def.path;
  const name = `${def.method.toUpperCase()} ${route}`;
  return (_ctx, next) => {
    trace.getActiveSpan()?.updateName(name).setAttribute('http.route', route);
    return next();
  };
}

/**
 * Authentication comes before the body is read, so an anonymous caller costs no parsing. A Sentry
 * client key is checked against the DSN project its path names: path and query are validated
 * first, so a malformed project id is a 400 whatever the key.
 */
function authStep(def: RouteDef, deps: AppDeps, hooks: KernelHooks): Middleware {
  return async (ctx, next) => {
    const state = ctx.state as RouteState;
    if (def.auth === 'console') state.principal = await consolePrincipal(ctx, deps, hooks);
    else if (def.auth === 'client-key') {
      // Always declared: mountRoutes refuses a client-key route without it.
      const { projectParam, keyFrom } = def.clientKey ?? { projectParam: '', keyFrom: 'request' };
      const { params } = validateInput(def, ctx, false);
      const projectNumber = String((params as Record<string, unknown>)[projectParam]);
      state.principal = await authenticateClientKey(ctx, deps, hooks, projectNumber, keyFrom);
    } else if (def.auth !== 'none') {
      const principal =
        def.auth === 'session'
          ? await authenticateSession(ctx, deps, hooks)
          : await authenticate(ctx, deps, hooks, def.auth, def.scope);
      (ctx.state as RequestState).principal = principal;
      checkEnvScope(hooks, (ctx as unknown as { params: Record<string, string> }).params ?? {}, principal);
    }
    await next();
  };
}

export function mountRoutes(
  router: Router,
  routes: readonly RouteDef[],
  deps: AppDeps,
  options: { checkResponses?: boolean; hooks: KernelHooks },
): void {
  const { hooks } = options;
  for (const def of routes) {
    if (def.scope !== undefined && !hooks.scopes.includes(def.scope))
      throw new Error(`${def.operationId} requires the scope ${def.scope}, which is not one of the app's`);
    if (def.auth === 'client-key' && !def.clientKey?.projectParam)
      throw new Error(`${def.operationId} takes a client key: it must name its project's path parameter`);
    const chain: Middleware[] = [nameSpan(def)];
    // Errors in the route's own style are answered here; `api` ones reach the app's error middleware.
    if (def.errors === 'oauth') chain.push(hooks.oauthErrors);
    else if (def.errors && def.errors !== 'api') chain.push(pageErrors(def.errors, deps));
    chain.push(authStep(def, deps, hooks));
    const limit = def.bodyLimit ?? defaultBodyLimit;
    if (def.bodyType === 'form') chain.push(formOnly, formBody(limit));
    else if (def.body && def.bodyItems) chain.push(itemsBody(def.bodyItems, limit, jsonBody(limit)));
    else if (def.body) chain.push(jsonBody(limit));
    if (def.csrf || (def.auth === 'console' && def.scope)) chain.push(formChecks(def, deps));
    chain.push(handlerFor(def, deps, options.checkResponses ?? false));
    router.register(koaPath(def.path), [def.method.toUpperCase()], chain as RouterMiddleware[], {
      name: def.operationId,
    });
  }
}

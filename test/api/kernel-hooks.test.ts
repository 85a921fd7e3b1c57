// The route kernel knows no scopes of its own (http/hooks.ts): the app's are handed in, and a
// route requiring any other is refused when it is mounted, before the app serves a request.
import Router from '@koa/router';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { allRoutes } from '../../src/app/app.ts';
import { kernelHooks } from '../../src/app/hooks.ts';
import type { AppDeps } from '../../src/http/context.ts';
import { defineRoute, mountRoutes } from '../../src/http/route.ts';

const probe = (scope: string) =>
  defineRoute({
    method: 'get',
    path: '/v1/probe/scoped',
    operationId: 'probeUnknownScope',
    summary: 'test probe',
    tags: ['Test'],
    auth: 'secret',
    scope,
    response: { status: 200, description: 'ok', schema: z.object({}) },
    handle: () => ({}),
  });

// Mounting reads only the declarations: no dependency is reached before a request comes.
const deps = {} as AppDeps;

describe('route scopes', () => {
  it("mounts every route of the app, each scope being one of the app's", () => {
    const router = new Router();
    mountRoutes(router, allRoutes, deps, { hooks: kernelHooks });
    expect(router.stack.length).toBe(allRoutes.length);
    expect(allRoutes.some((r) => r.scope === 'observability:write')).toBe(true);
  });

  it('refuses a route whose scope the app does not know, naming the route and the scope', () => {
    expect(() => mountRoutes(new Router(), [probe('observability:wirte')], deps, { hooks: kernelHooks })).toThrow(
      "probeUnknownScope requires the scope observability:wirte, which is not one of the app's",
    );
  });

  it('refuses a client-key route that names no path parameter for its project', () => {
    const unnamed = defineRoute({
      method: 'post',
      path: '/api/{project_id}/probe/',
      operationId: 'probeClientKey',
      summary: 'test probe',
      tags: ['Test'],
      auth: 'client-key',
      response: { status: 200, description: 'ok', schema: z.object({}) },
      handle: () => ({}),
    });
    expect(() => mountRoutes(new Router(), [unnamed], deps, { hooks: kernelHooks })).toThrow(
      "probeClientKey takes a client key: it must name its project's path parameter",
    );
  });
});

// Test-only routes that exercise the shared middleware (validation, limits, failures, slowness).
import { z } from 'zod';
import { defineRoute, type RouteDef } from '../../src/http/route.ts';

export function probeRoutes(gate?: { wait: () => Promise<void> }): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/probe/echo',
      operationId: 'probeEcho',
      summary: 'echo',
      tags: ['Test'],
      auth: 'none',
      body: z.object({
        name: z.string().min(1),
        count: z.number().int().min(0),
        nested: z.object({ hex: z.string().regex(/^[0-9a-f]{4}$/) }),
      }),
      response: { status: 200, description: 'ok', schema: z.object({ name: z.string() }) },
      handle: ({ body }) => ({ name: body.name }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/probe/boom',
      operationId: 'probeBoom',
      summary: 'throws',
      tags: ['Test'],
      auth: 'none',
      response: { status: 200, description: 'never', schema: z.object({}) },
      handle: () => {
        throw new Error('secret detail: password=hunter2 at /srv/app/internal.ts:12');
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/probe/db',
      operationId: 'probeDb',
      summary: 'reads the database',
      tags: ['Test'],
      auth: 'none',
      response: { status: 200, description: 'ok', schema: z.object({ one: z.number() }) },
      handle: async ({ deps }) => {
        const { rows } = await deps.db.raw<{ rows: { one: number }[] }>('select 1 as one');
        return { one: rows[0]!.one };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/probe/slow',
      operationId: 'probeSlow',
      summary: 'waits on a gate',
      tags: ['Test'],
      auth: 'none',
      response: { status: 200, description: 'ok', schema: z.object({ done: z.boolean() }) },
      handle: async () => {
        await gate?.wait();
        return { done: true };
      },
    }),
  ];
}

/** A promise the test opens when it chooses; `reached` resolves when a waiter arrives. */
export function createGate() {
  let open!: () => void;
  let arrived!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const reached = new Promise<void>((r) => (arrived = r));
  return {
    wait: () => {
      arrived();
      return opened;
    },
    open,
    reached,
  };
}

/**
 * The one way tests wait for a condition: polls `fn` every `intervalMs` until it answers a truthy
 * value, and answers that value. A throw counts as "not yet" (a row not there, a server not up);
 * at the deadline it fails with `what` and the last error. No fixed sleeps.
 */
export async function eventually<T>(
  fn: () => Promise<T> | T,
  {
    timeoutMs = 20_000,
    intervalMs = 50,
    what = 'condition',
  }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`${what} not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

// The identity commands, run in-process through commander against the real web and database:
// end-users list|get|create|delete|revoke-sessions|lock|unlock, sessions list|revoke (--json), and the operator's
// breached-password import merged by the real worker.
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { registerBreachedAdmin } from '../../src/cli/commands/breached.ts';
import { register } from '../../src/cli/commands/identity.ts';
import { createCliContext } from '../../src/cli/admin-context.ts';
import { inLocalStore } from '../../src/domain/identity/breached/breached.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { testEncryptionKey } from '../support/config.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { startIdentityWorker, strongPassword } from './support.ts';

let h: Harness;
let web: WebHandle;
let worker: Awaited<ReturnType<typeof startIdentityWorker>>;
let env: CreatedEnv;

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  worker = await startIdentityWorker(h);
  env = await createTestEnv(h.db);
});
afterAll(async () => {
  await worker?.stop();
});

async function cairn(args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  const ctx = createCliContext({
    CAIRN_API_URL: web.url,
    CAIRN_SECRET_KEY: env.secretKey,
    CAIRN_ENV: env.env.name,
    DATABASE_URL: h.config.DATABASE_URL,
    CAIRN_ENCRYPTION_KEY: testEncryptionKey,
    LOG_LEVEL: 'silent',
    ...extraEnv,
  });
  const program = new Command('cairn').exitOverride();
  register(program, ctx);
  registerBreachedAdmin(program.command('admin'), ctx);
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  const saved = process.env.CAIRN_END_USER_PASSWORD;
  if (extraEnv.CAIRN_END_USER_PASSWORD) process.env.CAIRN_END_USER_PASSWORD = extraEnv.CAIRN_END_USER_PASSWORD;
  try {
    await program.parseAsync(['node', 'cairn', ...args]);
  } finally {
    spy.mockRestore();
    if (saved === undefined) delete process.env.CAIRN_END_USER_PASSWORD;
    else process.env.CAIRN_END_USER_PASSWORD = saved;
    await ctx.close();
  }
  return out;
}

describe('cairn end-users and sessions', () => {
  it('creates, lists, gets, lists sessions, revokes them and deletes', async () => {
    const created = JSON.parse(
      await cairn(['end-users', 'create', '--email', 'cli@example.com', '--verified', '--json'], {
        CAIRN_END_USER_PASSWORD: strongPassword,
      }),
    ) as { id: string; has_password: boolean };
    expect(created).toMatchObject({ has_password: true });
    const listed = JSON.parse(await cairn(['end-users', 'list', '--json'])) as { end_users: { id: string }[] };
    expect(listed.end_users.map((u) => u.id)).toContain(created.id);
    expect(await cairn(['end-users', 'get', created.id])).toContain('cli@example.com');

    const signIn = await call(web.url, 'POST', '/v1/client/sign-in/password', {
      body: { identifier: 'cli@example.com', password: strongPassword, session_mode: 'browser' },
      headers: { 'cairn-publishable-key': env.publishableKey },
    });
    expect(signIn.status).toBe(200);
    const sessions = JSON.parse(await cairn(['sessions', 'list', created.id, '--json'])) as {
      sessions: { state: string }[];
    };
    expect(sessions.sessions.map((s) => s.state)).toEqual(['active']);
    expect(JSON.parse(await cairn(['end-users', 'revoke-sessions', created.id, '--json']))).toEqual({ revoked: 1 });
    expect(await cairn(['end-users', 'delete', created.id])).toContain(`deleted ${created.id}`);
    await expect(cairn(['end-users', 'get', created.id])).rejects.toMatchObject({ code: 'not_found' });
  });

  it('finds by part of an email, revokes one session, locks and unlocks', async () => {
    const created = JSON.parse(
      await cairn(['end-users', 'create', '--email', 'Locked.Out@example.com', '--verified', '--json'], {
        CAIRN_END_USER_PASSWORD: strongPassword,
      }),
    ) as { id: string };
    expect(await cairn(['end-users', 'list', '--email-contains', 'LOCKED.o'])).toBe(
      `${created.id}  Locked.Out@example.com\n`,
    );
    const signIn = () =>
      call(web.url, 'POST', '/v1/client/sign-in/password', {
        body: { identifier: 'locked.out@example.com', password: strongPassword, session_mode: 'browser' },
        headers: { 'cairn-publishable-key': env.publishableKey },
      });
    const session = (await signIn()).body.session as { id: string };
    expect(await cairn(['sessions', 'revoke', created.id, session.id])).toMatch(
      new RegExp(`^${session.id}\\s+revoked`),
    );
    expect(await cairn(['end-users', 'lock', created.id])).toContain('[locked]');
    expect(await signIn()).toMatchObject({ status: 403, body: { details: { reason: 'user_locked' } } });
    expect(JSON.parse(await cairn(['end-users', 'unlock', created.id, '--json']))).toMatchObject({ locked: false });
    expect((await signIn()).status).toBe(200);
  });
});

describe('cairn admin breached import', () => {
  it('stages a plain list and a HIBP range file; the worker merges them into the local store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-breached-'));
    const plain = join(dir, 'list.txt');
    writeFileSync(plain, 'an uncommon leaked passphrase 1\nanother leaked passphrase 22\n');
    const range = join(dir, '21BD1.txt');
    writeFileSync(range, '0018A45C4D1DEF81644B54AB7F969B88D65:1\n00D4F6E8FA6EECAD2A3AA415EEC418D38EC:2\n');
    const a = JSON.parse(await cairn(['admin', 'breached', 'import', plain, '--format', 'plain', '--json'])) as {
      id: string;
      entries: number;
    };
    const b = JSON.parse(await cairn(['admin', 'breached', 'import', range, '--json'])) as {
      id: string;
      entries: number;
    };
    expect([a.entries, b.entries]).toEqual([2, 2]);
    await eventually(async () =>
      (await h.db('breached_imports').where({ state: 'succeeded' }).count({ n: '*' }))[0]!.n === '2' ? true : undefined,
    );
    expect(await inLocalStore(h.db, 'an uncommon leaked passphrase 1')).toBe(true);
    expect(await inLocalStore(h.db, 'not leaked at all, this one 3')).toBe(false);
    expect(await h.db('breached_import_chunks').count({ n: '*' })).toEqual([{ n: '0' }]);
    // The plain list never reached the database in clear.
    expect(JSON.stringify(await h.db('breached_ranges').select())).not.toContain('leaked');
    const refused = await call(web.url, 'POST', `/v1/${env.env.name}/end_users`, {
      key: env.secretKey,
      body: { email: 'x@example.com', password: 'another leaked passphrase 22' },
    });
    expect(refused).toMatchObject({ status: 400, body: { details: { reason: 'breached_password' } } });
  });
});

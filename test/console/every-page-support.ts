// What test/console/every-page.test.ts visits: an environment with real captures (four groups, one
// resolved and one kept for a page to find changed under it; a Sentry event with frames, a user and
// tags), end users with a session and sign-ins and one locked, backups and restores in each state,
// alert rules (one fired), keys with fewer scopes, and console sign-in links, one used.
// Backups and operations are rows as the worker leaves them: the pages only read them, and a real
// backup and restore are test/console/backups.test.ts's.
import { randomBytes } from 'node:crypto';
import { createConsoleLink, redeemConsoleLink } from '../../src/domain/console/links.ts';
import { openConsoleSession } from '../../src/domain/console/sessions.ts';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import { lockEndUser } from '../../src/domain/identity/users/lock.ts';
import { createKey, type CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { newId } from '../../src/ids.ts';
import type { WebHandle } from '../../src/server.ts';
import { capture, envBase, groupIdOf, readStored, sampleEvent } from '../errors/support.ts';
import { strongPassword } from '../identity/support.ts';
import { call, createTestEnv, type Harness } from '../support/harness.ts';
import { idleJobs } from '../support/jobs.ts';
import { paymentEvent, sendEvent } from './group-support.ts';

/** Who visits a page: no one signed in, the operator (every scope), or a key with one scope. */
export type Visitor = 'nobody' | 'operator' | 'errorsReader' | 'backupsReader';

export interface Fixtures {
  env: CreatedEnv;
  /** The Sentry event's group and uid, and the resolved group. */
  group: string;
  uid: string;
  resolved: string;
  /** An unresolved group no other page changes, and a triage of it through the API (as another client would). */
  conflicted: string;
  triage(group: string, action: 'acknowledge' | 'resolve'): Promise<void>;
  user: string;
  /** A user the operator locked. */
  lockedUser: string;
  backup: string;
  /** An alert rule that fired for `group`. */
  rule: string;
  ops: { running: string; succeeded: string; failed: string };
  /** Paths of a sign-in link that still opens the console and of one already used. */
  link: string;
  usedLink: string;
  /** A console session token for the visitor (a new session each call). */
  session(who: Exclude<Visitor, 'nobody'>): Promise<string>;
}

async function triage(web: WebHandle, env: CreatedEnv, id: string, action: 'acknowledge' | 'resolve'): Promise<void> {
  const group = await call<{ etag: string }>(web.url, 'GET', `${envBase(env)}/error_groups/${id}`, {
    key: env.secretKey,
  });
  const answer = await call(web.url, 'POST', `${envBase(env)}/error_groups/${id}:${action}`, {
    key: env.secretKey,
    body: { etag: group.body.etag },
  });
  if (answer.status !== 200) throw new Error(`${action} answered ${answer.status}`);
}

async function captureErrors(web: WebHandle, env: CreatedEnv) {
  for (const e of [
    sampleEvent(),
    sampleEvent({ exception_type: 'RangeError', message: 'Invalid array length', service_name: 'billing' }),
  ])
    await readStored(web, env, await capture(web, env, e));
  const sent = paymentEvent(0, {
    user: { id: '42', email: 'ada@example.com', username: 'ada' },
    tags: { browser: 'Firefox', plan: 'pro' },
  });
  await sendEvent(web, env, sent);
  const stored = (await readStored<{ name: string; uid: string }>(web, env, sent.event_id)).body;
  const toResolve = await capture(web, env, sampleEvent({ exception_type: 'SyntaxError', message: 'Unexpected }' }));
  const resolved = groupIdOf((await readStored(web, env, toResolve)).body.name);
  await triage(web, env, resolved, 'resolve');
  const toConflict = await capture(
    web,
    env,
    sampleEvent({ exception_type: 'ReferenceError', message: 'cart is not defined' }),
  );
  const conflicted = groupIdOf((await readStored(web, env, toConflict)).body.name);
  return { group: groupIdOf(stored.name), uid: stored.uid, resolved, conflicted };
}

async function endUsers(h: Harness, web: WebHandle, env: CreatedEnv): Promise<{ user: string; lockedUser: string }> {
  const deps = { db: h.db, jobs: idleJobs(h.config) };
  const ada = await createEndUser(deps, env.env.id, {
    email: 'ada@example.com',
    password: strongPassword,
    email_verified: true,
  });
  const bob = await createEndUser(deps, env.env.id, { email: 'bob@example.com', password: strongPassword });
  await lockEndUser(h.db, env.env.id, bob.id);
  for (const password of ['not the password at all', strongPassword])
    await call(web.url, 'POST', '/v1/client/sign-in/password', {
      body: { identifier: 'ada@example.com', password, session_mode: 'browser' },
      headers: { 'cairn-publishable-key': env.publishableKey },
    });
  return { user: ada.id, lockedUser: bob.id };
}

/** A succeeded, a running and a failed backup, and a restore of the first in each state. */
async function backupRows(h: Harness, env: CreatedEnv) {
  const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);
  const backup = (state: string, minutesAgo: number, o: Record<string, unknown> = {}) => ({
    id: newId('backup', at(minutesAgo).getTime()),
    env_id: env.env.id,
    type: 'manual',
    trigger: 'manual',
    state,
    bucket: 'cairn-backups',
    object_key: `backups/${randomBytes(6).toString('hex')}.sql.gz`,
    create_time: at(minutesAgo),
    expire_time: at(-90 * 24 * 60),
    ...o,
  });
  const rows = [
    backup('succeeded', 30, { size_bytes: 48_213, gzip_bytes: 9_877 }),
    backup('failed', 20, {
      error: 'pg_dump: error: connection to server failed: FATAL: password authentication failed',
    }),
    backup('running', 1),
  ];
  await h.db('backups').insert(rows);
  const op = (state: string, o: Record<string, unknown> = {}) => ({
    id: newId('op'),
    kind: 'restore',
    requester_env_id: env.env.id,
    env_id: env.env.id,
    backup_id: rows[0]!.id,
    state,
    ...o,
  });
  const ops = {
    running: op('running', { phase: 'restoring', bytes_read: 4_000, bytes_total: 9_877 }),
    succeeded: op('succeeded', { phase: 'done', pre_backup_id: rows[0]!.id, finish_time: new Date() }),
    failed: op('failed', {
      error: JSON.stringify({ code: 'restore_failed', message: 'The backup does not match its checksum.' }),
    }),
  };
  await h.db('backup_operations').insert(Object.values(ops));
  return { backup: rows[0]!.id, ops: { running: ops.running.id, succeeded: ops.succeeded.id, failed: ops.failed.id } };
}

/** Two alert rules, the first with email and Slack actions and a firing for `group` (as the worker records one). */
async function alertRules(h: Harness, web: WebHandle, env: CreatedEnv, group: string): Promise<string> {
  const create = (body: Record<string, unknown>) =>
    call<{ id: string }>(web.url, 'POST', `${envBase(env)}/alert_rules`, { key: env.secretKey, body });
  const fired = await create({
    name: 'Checkout errors for the on-call person',
    when: 'new_group',
    q: 'service:checkout browser:"Mobile Safari"',
    actions: [
      { type: 'email', to: ['oncall@example.com', 'a.very.long.address.for.a.team@subdomain.example.com'] },
      { type: 'slack', url: 'http://127.0.0.1:9/services/T0000000/B0000000/XXXXXXXXXXXXXXXXXXXXXXXX' },
    ],
  });
  if (fired.status !== 201) throw new Error(`creating a rule answered ${fired.status}`);
  await create({
    name: 'Bursts',
    when: 'frequency',
    threshold: { events: 1000, window_minutes: 60 },
    actions: [{ type: 'email', to: ['team@example.com'] }],
    state: 'disabled',
  });
  await h.db('alert_firings').insert({
    id: newId('alf'),
    rule_id: fired.body.id,
    env_id: env.env.id,
    group_id: group,
    reason: 'new_group',
    facts: JSON.stringify({}),
  });
  return fired.body.id;
}

export async function makeFixtures(h: Harness, web: WebHandle): Promise<Fixtures> {
  const env = await createTestEnv(h.db);
  const errors = await captureErrors(web, env);
  const users = await endUsers(h, web, env);
  const backups = await backupRows(h, env);
  const rule = await alertRules(h, web, env, errors.group);
  const keys = {
    errorsReader: await createKey(h.db, env.env, 'secret', ['observability:read']),
    backupsReader: await createKey(h.db, env.env, 'secret', ['backups:read']),
  };
  const pathOf = (url: string) => url.slice(web.url.length);
  const link = await createConsoleLink(h.db, web.url, env.env.id, null);
  const used = await createConsoleLink(h.db, web.url, env.env.id, null);
  await redeemConsoleLink(h.db, new URL(used.url).searchParams.get('token')!);
  return {
    env,
    ...errors,
    ...users,
    ...backups,
    rule,
    triage: (group, action) => triage(web, env, group, action),
    link: pathOf(link.url),
    usedLink: pathOf(used.url),
    session: (who) =>
      openConsoleSession(
        h.db,
        env.env.id,
        who === 'operator' ? null : keys[who].key.id,
        who === 'operator' ? 'link' : 'key',
      ),
  };
}

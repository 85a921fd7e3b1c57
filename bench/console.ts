// The console's pages at size (docs/api.md "Console"; target: p95 < 100 ms with 10,000 error groups
// and 1,000,000 events): an environment seeded in SQL with that many groups and events (their
// hourly counts as the worker keeps them) and 10,000 end users; each page fetched
// BENCH_CONSOLE_REQUESTS times in turn over keep-alive HTTP with a console session's cookie, its
// p50 and p95, and p95 against GET /healthz's of the same run (the HTTP floor).
// Env: DATABASE_URL, BENCH_CONSOLE_GROUPS (10000), BENCH_CONSOLE_EVENTS (1000000), BENCH_CONSOLE_REQUESTS (200).
import http from 'node:http';
import { openConsoleSession } from '../src/domain/console/sessions.ts';
import { keyringFromConfig } from '../src/crypto.ts';
import { createDb } from '../src/db.ts';
import { StackEncoder, packBody } from '../src/domain/errors/pipeline/event-codec.ts';
import { ensurePartitions } from '../src/domain/errors/retention/prune.ts';
import { createEnvWithKeys } from '../src/domain/tenancy/envs.ts';
import { runMigrations } from '../src/migrate.ts';
import { startWeb } from '../src/server.ts';
import { ms, quantile, report, scratchDatabase } from './support.ts';

const groups = Number(process.env.BENCH_CONSOLE_GROUPS ?? 10_000);
const events = Number(process.env.BENCH_CONSOLE_EVENTS ?? 1_000_000);
const requests = Number(process.env.BENCH_CONSOLE_REQUESTS ?? 200);
const days = 14;

/** A stored body as the worker writes one: 20 mapped frames with context, tags and breadcrumbs. */
function sampleBody(): Buffer {
  const frames = Array.from({ length: 20 }, (_, i) =>
    JSON.stringify({
      function: `handler${i}`,
      file: `src/routes/part${i}.ts`,
      line: 10 + i,
      column: 5,
      in_app: i < 12,
      pre_context: ['const a = 1;', 'const b = 2;'],
      context_line: `  throw new Error('part ${i}');`,
      post_context: ['}'],
      generated: { function: 'a', file: 'https://shop.example.com/main.js', line: 1, column: 100 * i },
    }),
  );
  const segment = new StackEncoder().framesSegment(frames, frames.map((_, i) => `    at handler${i}`).join('\n'));
  return packBody(segment, 'Error: part 0', {
    event_time: new Date().toISOString(),
    exception_type: 'Error',
    message: 'part 0',
    service_name: 'api',
    release: 'shop@1.0.0',
    breadcrumbs: [{ timestamp: new Date().toISOString(), category: 'ui.click', message: 'clicked Pay' }],
    tags: { plan: 'pro', region: 'eu' },
    scrub_counts: {},
  });
}

const scratch = await scratchDatabase();
const config = scratch.config;
await runMigrations(config);
const db = createDb(config);
const web = await startWeb(config, { host: '127.0.0.1', port: 0 });
try {
  const env = await createEnvWithKeys(db, 'orgs/bench/projects/console/envs/prod', 'test', keyringFromConfig(config));
  const envId = env.env.id;
  const now = Date.now();
  const t0 = performance.now();
  await ensurePartitions(db, new Date(now), new Date(now - (days + 1) * 86_400_000));
  // Group g: 10 services, a third of each state, last seen spread over the 14 days.
  await db.raw(
    `insert into error_groups (id, env_id, fingerprint, title, culprit, service_name, state, etag, first_seen_time,
       last_seen_time, occurrence_count, last_release)
     select 'eg_' || lpad(g::text, 26, '0'), ?, md5(g::text), 'Error: failure number ' || g, 'handler' || (g % 20) || ' (src/routes/part.ts)',
       'svc-' || (g % 10), (array['unresolved', 'acknowledged', 'resolved'])[1 + g % 3], md5('etag' || g),
       to_timestamp(?::float8) - interval '14 days', to_timestamp(?::float8) - (g % 1000) * interval '20 minutes', ?::int / ?::int, 'shop@1.0.0'
     from generate_series(0, ?::int - 1) g`,
    [envId, now / 1000, now / 1000, events, groups, groups],
  );
  // Events spread evenly over the groups and the 14 days, all with one body, their facets kept
  // (below) as the store keeps them, so the facets backfill has nothing of them to add.
  const body = sampleBody();
  const step = 100_000;
  for (let from = 0; from < events; from += step) {
    await db.raw(
      `insert into error_events (uid, env_id, group_id, event_time, receive_time, release, service_name, body_deflated, facets_kept)
       select 'err_c0' || lpad(e::text, 26, '0'), ?, 'eg_' || lpad((e % ?::int)::text, 26, '0'), t, t, 'shop@1.0.0', 'svc-' || (e % ?::int % 10), ?, true
       from generate_series(?::bigint, ?::bigint) e, lateral (select to_timestamp(?::float8) - (e % 20160) * interval '1 minute' as t) x`,
      [envId, groups, groups, body, from, Math.min(events, from + step) - 1, now / 1000],
    );
    process.stderr.write(`seeded ${Math.min(events, from + step).toLocaleString('en')} events\r`);
  }
  await db.raw(
    `insert into error_group_hours (group_id, env_id, hour, count)
     select group_id, env_id, date_trunc('hour', receive_time, 'UTC'), count(*) from error_events where env_id = ? group by 1, 2, 3`,
    [envId],
  );
  // The facets the worker keeps (error_group_tags, error_group_users): per group its release and
  // level, three browsers, a plan and a region, and about 14 of the 10,000 users (each user in
  // about 14 groups), so that a tag filter and `user:` find hundreds of groups among 10,000.
  await db.raw(
    `insert into error_group_tags (group_id, env_id, key, value, count, last_seen_time)
     select g.id, g.env_id, t.key, t.value, greatest(1, g.occurrence_count / t.share), g.last_seen_time
     from error_groups g, lateral (values
       ('release', 'shop@1.0.0', 1),
       ('level', case when g.fingerprint < '4' then 'warning' else 'error' end, 1),
       ('browser', 'Chrome ' || (100 + ('x' || substr(g.fingerprint, 1, 4))::bit(16)::int % 30), 2),
       ('browser', 'Firefox ' || (110 + ('x' || substr(g.fingerprint, 5, 4))::bit(16)::int % 20), 3),
       ('browser', 'Safari 17', 6),
       ('plan', 'pro', 1),
       ('region', 'eu-' || (('x' || substr(g.fingerprint, 9, 2))::bit(8)::int % 50), 1)
     ) as t(key, value, share)
     where g.env_id = ?`,
    [envId],
  );
  await db.raw(
    `insert into error_group_users (group_id, env_id, user_key, user_id, email, count, first_seen_time, last_seen_time)
     select g.id, g.env_id, 'id:' || u, u::text, 'user' || u || '@example.com', 1, g.first_seen_time, g.last_seen_time
     from error_groups g, generate_series(0, 13) k, lateral (select 1 + (substr(g.id, 4)::int * 14 + k * 997) % 10000 as u) x
     where g.env_id = ?`,
    [envId],
  );
  await db.raw(
    `update error_groups g set first_release = 'shop@1.0.0', user_count = (select count(*) from error_group_users u where u.group_id = g.id)
     where g.env_id = ?`,
    [envId],
  );
  await db.raw(
    `insert into end_users (id, env_id, email, email_normalized, email_verified_time, create_time)
     select 'eu_' || lpad(u::text, 26, '0'), ?, 'user' || u || '@example.com', 'user' || u || '@example.com',
       case when u % 2 = 0 then now() end, now() - u * interval '1 minute'
     from generate_series(1, 10000) u`,
    [envId],
  );
  await db.raw('analyze');
  process.stderr.write(`\nseeded in ${(ms(t0) / 1000).toFixed(0)} s\n`);

  const cookie = `cairn_console_session=${await openConsoleSession(db, envId, null, 'link')}`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const port = Number(new URL(web.url).port);
  const get = (path: string) =>
    new Promise<number>((resolve, reject) => {
      const t = performance.now();
      http
        .get({ host: '127.0.0.1', port, path, agent, headers: { cookie } }, (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode !== 200) reject(new Error(`GET ${path} answered ${res.statusCode}`));
            else resolve(ms(t));
          });
        })
        .on('error', reject);
    });
  // The 5th page's link, followed from the first as a person would (the links carry signed positions).
  let fifth = '/console/errors?state=all';
  for (let i = 0; i < 4; i++) {
    const html = await (await fetch(`${web.url}${fifth}`, { headers: { cookie } })).text();
    const next = /href="(\/console\/errors\?[^"]*after=[^"]+)"/.exec(html)?.[1];
    if (!next) throw new Error(`no next-page link on ${fifth}`);
    fifth = next.replaceAll('&amp;', '&');
  }
  const pages: Record<string, (i: number) => string> = {
    'GET /healthz': () => '/healthz',
    '/console/errors (unresolved)': () => '/console/errors',
    '/console/errors?state=all': () => '/console/errors?state=all',
    '/console/errors, 5th page': () => fifth,
    '/console/errors?service=…': (i) => `/console/errors?state=all&service=svc-${i % 10}`,
    '/console/errors/{id}': (i) => `/console/errors/eg_${String((i * 7919) % groups).padStart(26, '0')}`,
    // Event k is group k's (the seed spreads events over groups by number).
    '/console/errors/{id}/events/{uid}': (i) => {
      const k = String((i * 7919) % groups).padStart(26, '0');
      return `/console/errors/eg_${k}/events/err_c0${k}`;
    },
    '/console/errors?q=<words>': (i) =>
      `/console/errors?state=all&q=${encodeURIComponent(`"number ${i % 97}" failure`)}`,
    '/console/errors?q=browser:…': (i) =>
      `/console/errors?state=all&q=${encodeURIComponent(`browser:"Chrome ${100 + (i % 30)}"`)}`,
    '/console/errors?q=user:…': (i) => `/console/errors?state=all&q=user:${1 + ((i * 37) % 10000)}`,
    '/console/errors?q=is:… !level:… region:…': (i) =>
      `/console/errors?q=${encodeURIComponent(`is:unresolved !level:warning region:eu-${i % 50}`)}`,
    '/console/errors?sort=first_seen': () => '/console/errors?state=all&sort=first_seen',
    '/console/errors?sort=events': () => '/console/errors?state=all&sort=events',
    '/console/errors?sort=users': () => '/console/errors?state=all&sort=users',
    '/console/errors?q=…&sort=users': (i) =>
      `/console/errors?state=all&sort=users&q=${encodeURIComponent(`browser:"Firefox ${110 + (i % 20)}"`)}`,
    '/console/users': () => '/console/users',
    '/console/users/{id}': (i) => `/console/users/eu_${String(1 + (i % 10000)).padStart(26, '0')}`,
    '/console/backups': () => '/console/backups',
  };
  const rows: Record<string, number> = {};
  let floor = NaN;
  for (const [name, path] of Object.entries(pages)) {
    for (let i = 0; i < 20; i++) await get(path(i));
    const times: number[] = [];
    for (let i = 0; i < requests; i++) times.push(await get(path(i)));
    times.sort((a, b) => a - b);
    const p95 = quantile(times, 0.95);
    if (name === 'GET /healthz') floor = p95;
    rows[`${name}: p50 ms`] = quantile(times, 0.5);
    rows[`${name}: p95 ms${name === 'GET /healthz' ? '' : ' (< 100)'}`] = p95;
    if (name !== 'GET /healthz') rows[`  ${name}: p95 / healthz p95`] = p95 / floor;
  }
  agent.destroy();
  report(
    `console pages (${groups.toLocaleString('en')} groups, ${events.toLocaleString('en')} events, one request at a time)`,
    rows,
  );
} finally {
  await web.stop();
  await db.destroy();
  await scratch.drop();
}

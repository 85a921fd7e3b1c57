// `cairn backups schedules|schedule --at|unschedule`, as a Heroku user reaches for them, over the
// real API: the hour is kept in the environment's settings, and a bad --at says what it takes.
import { expect, it } from 'vitest';
import { runCairn } from '../support/cli.ts';
import { call, createTestEnv, useWeb } from '../support/harness.ts';

const stack = useWeb();

it('shows, moves and stops the schedule', async () => {
  const env = await createTestEnv(stack.h.db);
  const vars = { CAIRN_API_URL: stack.web.url, CAIRN_SECRET_KEY: env.secretKey, CAIRN_ENV: env.env.name };
  const shown = await runCairn(['backups', 'schedules'], vars);
  expect(shown.code, shown.stderr).toBe(0);
  expect(shown.stdout).toContain('daily at 03:00 UTC (kept 7 days)');

  const moved = await runCairn(['backups', 'schedule', '--at', '02:00 UTC'], vars);
  expect(moved.code, moved.stderr).toBe(0);
  expect(moved.stdout).toContain('daily at 02:00 UTC');
  const settings = await call<{ schedule_hour_utc: number; schedule_enabled: boolean }>(
    stack.web.url,
    'GET',
    `/v1/${env.env.name}/backup_settings`,
    { key: env.secretKey },
  );
  expect(settings.body).toMatchObject({ schedule_hour_utc: 2, schedule_enabled: true });

  const stopped = await runCairn(['backups', 'unschedule', '--json'], vars);
  expect(JSON.parse(stopped.stdout)).toMatchObject({ schedule_enabled: false, schedule_hour_utc: 2 });
  expect((await runCairn(['backups', 'schedules'], vars)).stdout).toContain('no scheduled backups');

  for (const bad of ['25:00', '02:30 UTC', '2am', '02:00 America/New_York']) {
    const r = await runCairn(['backups', 'schedule', '--at', bad], vars);
    expect(r.code, bad).toBe(1);
    expect(r.stderr).toContain('--at takes a whole hour in UTC');
  }
});

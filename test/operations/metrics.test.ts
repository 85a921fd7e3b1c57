// GET /metrics and `cairn admin status`: off (404) without CAIRN_METRICS_TOKEN, 401 without the
// right bearer, Prometheus text with it; a paused worker's intake is seen growing, then draining
// once a worker runs; the HTTP latency histogram is labelled by route template.
import { Command } from 'commander';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { describeStatus, registerAdmin } from '../../src/cli/commands/admin.ts';
import { createCliContext } from '../../src/cli/admin-context.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { queues } from '../../src/queues.ts';
import type { WebHandle } from '../../src/server.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { call, createHarness, createTestEnv, startTestWeb, type Harness, useWeb } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { sampleEvent } from '../errors/support.ts';

const token = 'metrics-token-for-the-tests-0123456789';
let h: Harness;
let web: WebHandle;
let env: CreatedEnv;

const stack = useWeb({}, { CAIRN_METRICS_TOKEN: token });
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
});

async function scrape(): Promise<string> {
  const res = await fetch(`${web.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

const value = (text: string, series: string): number => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  if (!line) throw new Error(`no ${series} in the scrape`);
  return Number(line.slice(series.length + 1));
};

describe('GET /metrics', () => {
  it('answers 404 when CAIRN_METRICS_TOKEN is unset, and 401 without the right bearer', async () => {
    const off = await createHarness();
    const offWeb = await startTestWeb(off);
    try {
      const res = await call(offWeb.url, 'GET', '/metrics');
      expect(res).toMatchObject({
        status: 404,
        body: { code: 'not_found', message: expect.stringContaining('CAIRN_METRICS_TOKEN') },
      });
    } finally {
      await offWeb.stop();
      await off.close();
    }
    expect((await call(web.url, 'GET', '/metrics')).status).toBe(401);
    const wrong = await call(web.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${token}x` } });
    expect(wrong).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
  });

  it("shows a paused worker's intake growing and its age, then draining once a worker runs", async () => {
    const capture = () =>
      call(web.url, 'POST', `/v1/${env.env.name}/error_groups:capture`, {
        key: env.secretKey,
        body: { error_event: sampleEvent() },
      });
    for (let i = 0; i < 3; i++) expect((await capture()).status).toBe(202);
    const first = await scrape();
    expect(value(first, 'cairn_intake_pending')).toBe(3);
    for (let i = 0; i < 4; i++) await capture();
    const second = await scrape();
    expect(value(second, 'cairn_intake_pending')).toBe(7);
    expect(value(second, 'cairn_intake_oldest_seconds')).toBeGreaterThan(0);
    expect(value(second, 'cairn_dead_letters')).toBe(0);
    // Per environment, as backpressure counts it (a tenth of a second after the commits).
    const envSeries = (text: string, series: string) => value(text, `${series}{env="${env.env.name}"}`);
    await eventually(async () => expect(envSeries(await scrape(), 'cairn_env_intake_pending')).toBe(7));
    expect(envSeries(await scrape(), 'cairn_env_intake_max_pending')).toBe(100_000);
    expect(value(second, 'cairn_backup_drills_failed')).toBe(0);
    expect(second).toMatch(/^cairn_jobs_queued\{queue="backups\.capture"\} \d+$/m);
    expect(second).toMatch(
      /^cairn_http_request_duration_seconds_count\{method="POST",route="\/v1\/orgs\/\{org\}\/projects\/\{project\}\/envs\/\{env\}\/error_groups:capture",status="2xx"\} 7$/m,
    );

    // `cairn admin status` says the same for a person.
    const ctx = createCliContext({ DATABASE_URL: h.database.url });
    const program = new Command('cairn').exitOverride();
    registerAdmin(program, ctx);
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      await program.parseAsync(['node', 'cairn', 'admin', 'status']);
      const printed = stdout.mock.calls.map((c) => String(c[0])).join('');
      expect(printed).toMatch(/error intake: 7 pending \(oldest \d+\.\d s\), 0 claimed by workers/);
      expect(printed).toContain('dead letters: 0');
      expect(printed).toContain(`busiest environments (pending / max_pending):\n  ${env.env.name}  7 / 100000\n`);
      expect(printed).toMatch(/backups\.capture\s+\d+\s+\d+\s+\d+/);
    } finally {
      stdout.mockRestore();
      await ctx.close();
    }

    let worker: WorkerHandle<typeof queues> | undefined;
    try {
      worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
      await eventually(async () => expect(value(await scrape(), 'cairn_intake_pending')).toBe(0));
      expect(value(await scrape(), 'cairn_intake_oldest_seconds')).toBe(0);
      await eventually(async () => expect(await scrape()).not.toContain('cairn_env_intake_pending{'));
    } finally {
      await worker?.stop();
    }
  });
});

describe('cairn admin status', () => {
  it('names an environment over its max_pending as refusing captures, and says what that means', () => {
    const text = describeStatus({
      intake: { pending: 120, oldest_seconds: 3, leased: 0 },
      environments: [
        { name: 'orgs/a/projects/b/envs/full', pending: 100, max_pending: 100 },
        { name: 'orgs/a/projects/b/envs/calm', pending: 20, max_pending: 1000 },
      ],
      dead_letters: 0,
      queues: [],
      backup_drills_failed: 0,
    });
    expect(text).toContain('  orgs/a/projects/b/envs/full  100 / 100  refusing captures (429)\n');
    expect(text).toContain('  orgs/a/projects/b/envs/calm  20 / 1000\n');
    expect(text).toMatch(/note: an environment is over its max_pending and its captures are refused/);
  });
});

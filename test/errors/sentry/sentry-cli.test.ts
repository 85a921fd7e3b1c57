// The real sentry-cli (the npm package's binary) against Cairn: `sourcemaps upload` asks for the
// chunk-upload options, uploads the artifact bundle in chunks, asks for it to be assembled, and a
// worker stores its maps and minified files under the release, with the debug ids sentry-cli
// injected; frames of the bundle's files are then mapped whatever host served them. Keys of
// another org, publishable keys and made-up tokens are refused.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../../src/domain/tenancy/envs.ts';
import { parseEnvName } from '../../../src/domain/tenancy/names.ts';
import { call, sqlNumber } from '../../support/harness.ts';
import { eventually } from '../../support/probes.ts';
import { envBase, readStored, useStack } from '../support.ts';

const run = promisify(execFile);
const t = useStack();
const dir = mkdtempSync(join(tmpdir(), 'cairn-sentry-cli-'));

beforeAll(async () => {
  await build({
    entryPoints: ['test/errors/sentry/fixtures/browser-app.js'],
    bundle: true,
    minify: true,
    sourcemap: 'external',
    format: 'iife',
    outfile: join(dir, 'assets', 'app.min.js'),
    logLevel: 'silent',
  });
}, 60_000);
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
});

const names = (e: CreatedEnv) => parseEnvName(e.env.name)!;

async function sentryCli(args: string[], token: string, over: Record<string, string> = {}) {
  const { org, project } = names(t.env);
  try {
    const out = await run('node_modules/.bin/sentry-cli', args, {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dir,
        SENTRY_URL: t.s.web.url,
        SENTRY_AUTH_TOKEN: token,
        SENTRY_ORG: org,
        SENTRY_PROJECT: project,
        ...over,
      },
    });
    return { code: 0, out: out.stdout + out.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

const listFiles = async (release: string, kind: 'source_maps' | 'minified_sources') =>
  (
    await call<Record<string, { file: string }[]>>(
      t.s.web.url,
      'GET',
      `${envBase(t.env)}/releases/${release}/${kind}`,
      {
        key: t.env.secretKey,
      },
    )
  ).body[kind] ?? [];

/** Sends one event through the envelope route with a frame at `file`, where the bundle reads `cart.discount.rate`. */
async function eventAt(file: string, release: string | undefined, debugMeta?: unknown) {
  const minified = readFileSync(join(dir, 'assets', 'app.min.js'), 'utf8');
  const at = minified.indexOf('.discount.rate') + 1;
  const lineno = minified.slice(0, at).split('\n').length;
  const colno = at - minified.lastIndexOf('\n', at - 1);
  const eventId = crypto.randomUUID().replace(/-/g, '');
  const event = {
    event_id: eventId,
    platform: 'javascript',
    ...(release ? { release } : {}),
    ...(debugMeta ? { debug_meta: debugMeta } : {}),
    exception: {
      values: [{ type: 'TypeError', value: 'x', stacktrace: { frames: [{ abs_path: file, lineno, colno }] } }],
    },
  };
  const body = `{}\n{"type":"event"}\n${JSON.stringify(event)}`;
  const res = await fetch(
    `${t.s.web.url}/api/${t.env.clientKey.projectNumber}/envelope/?sentry_key=${t.env.clientKey.publicKey}`,
    { method: 'POST', body },
  );
  expect(res.status).toBe(200);
  type Frame = { file?: string; line?: number; function?: string; unmapped_reason?: string };
  return (await readStored<{ stack_frames: Frame[] }>(t.s.web, t.env, eventId)).body.stack_frames[0];
}

describe('sentry-cli sourcemaps upload', () => {
  it('uploads a release whose maps then serve frames from any host', async () => {
    const up = await sentryCli(['sourcemaps', 'upload', '--release', 'shop@3.0.0', dir], t.env.secretKey);
    expect(up.code, up.out).toBe(0);
    expect(up.out).toMatch(/~\/assets\/app\.min\.js/);
    const maps = await eventually(async () => {
      const m = await listFiles('shop@3.0.0', 'source_maps');
      return m.length > 0 ? m : undefined;
    });
    expect(maps.map((m) => m.file)).toEqual(['~/assets/app.min.js']);
    expect((await listFiles('shop@3.0.0', 'minified_sources')).map((m) => m.file)).toEqual(['~/assets/app.min.js']);
    // The chunks are spent once the bundle is stored.
    expect(await sqlNumber(t.h.db, 'select count(*) from sentry_chunks where env_id = ?', [t.env.env.id])).toBe(0);

    const frame = await eventAt('https://cdn.example.com/assets/app.min.js', 'shop@3.0.0');
    expect(frame).toMatchObject({
      file: expect.stringMatching(/browser-app\.js$/),
      line: 9,
      function: 'applyDiscount',
    });
  });

  it('uploads injected debug ids with no release, and frames find their map by them', async () => {
    const inject = await run('node_modules/.bin/sentry-cli', ['sourcemaps', 'inject', join(dir, 'assets')]);
    expect(inject.stdout).toMatch(/debug id/i);
    const map = JSON.parse(readFileSync(join(dir, 'assets', 'app.min.js.map'), 'utf8')) as { debugId: string };
    const up = await sentryCli(['sourcemaps', 'upload', join(dir, 'assets')], t.env.secretKey);
    expect(up.code, up.out).toBe(0);
    await eventually(async () => (await listFiles('debug-ids', 'source_maps')).length > 0);
    const frame = await eventAt('https://elsewhere.example/x/bundle.js', undefined, {
      images: [{ type: 'sourcemap', code_file: 'https://elsewhere.example/x/bundle.js', debug_id: map.debugId }],
    });
    expect(frame).toMatchObject({ file: expect.stringMatching(/browser-app\.js$/), line: 9 });
  });

  it('refuses another org, a publishable key and a made-up token, and stores nothing', async () => {
    const before = await sqlNumber(t.h.db, 'select count(*) from sentry_chunks');
    const wrongOrg = await sentryCli(
      ['sourcemaps', 'upload', '--release', 'x1', join(dir, 'assets')],
      t.env.secretKey,
      {
        SENTRY_ORG: 'someone-else',
      },
    );
    expect(wrongOrg.code).not.toBe(0);
    expect(wrongOrg.out).toMatch(/403|forbidden|permission/i);
    for (const token of [t.env.publishableKey, 'cairn_sk_test_' + 'x'.repeat(32)]) {
      const r = await sentryCli(['sourcemaps', 'upload', '--release', 'x2', join(dir, 'assets')], token);
      expect(r.code).not.toBe(0);
    }
    const options = await call(t.s.web.url, 'GET', `/api/0/organizations/${names(t.env).org}/chunk-upload/`, {
      key: t.env.publishableKey,
    });
    expect([401, 403]).toContain(options.status);
    expect(await sqlNumber(t.h.db, 'select count(*) from sentry_chunks')).toBe(before);
  });

  it('answers a chunk that is not what its name says with 400, and keeps nothing', async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('not the named bytes')]), 'a'.repeat(40));
    const res = await fetch(`${t.s.web.url}/api/0/organizations/${names(t.env).org}/chunk-upload/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.env.secretKey}` },
      body: form,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/not named by the SHA-1 of its bytes/);
    expect(await sqlNumber(t.h.db, 'select count(*) from sentry_chunks where sha1 = ?', ['a'.repeat(40)])).toBe(0);
  });
});

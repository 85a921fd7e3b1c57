// Minified files over HTTP: uploaded and listed per release; a captured event's frames in a
// function the map names nothing for read back with that function's original name, taken from the
// uploaded minified file by the worker; bad uploads are refused and change nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import { CompactMap } from '../../../src/domain/errors/source-maps/compact-map.ts';
import type { StackFrame } from '../../../src/domain/errors/pipeline/symbolicate.ts';
import { call } from '../../support/harness.ts';
import { capture, envBase, readStored, useStack } from '../support.ts';
import { callSites, mapJson, minifiedText, url, type Site } from './support.ts';

const t = useStack();
let sites: Site[];

beforeAll(async () => {
  // Call sites whose callee is not the function around them: the map alone names them wrong.
  const map = new CompactMap(mapJson);
  sites = (await callSites(map))
    .filter((x) => map.originalPositionFor(x.line, x.column - 1)?.name !== x.truth)
    .filter((_, i) => i % 97 === 0)
    .slice(0, 12);
}, 60_000);

const stackOf = (picked: Site[]) =>
  ['TypeError: boom', ...picked.map((x) => `    at x (${url}:${x.line}:${x.column})`)].join('\n');

describe('minified files', () => {
  it('are uploaded and listed per release, and name frames by the function around them', async () => {
    const base = `${envBase(t.env)}/releases/3.7.1`;
    expect(
      (
        await call(t.s.web.url, 'PUT', `${base}/source_maps`, {
          key: t.env.secretKey,
          body: { file: url, source_map: JSON.parse(mapJson) },
        })
      ).status,
    ).toBe(201);
    const put = await call<{ name: string; file: string; size_bytes: number }>(
      t.s.web.url,
      'PUT',
      `${base}/minified_sources`,
      { key: t.env.secretKey, body: { file: url, source: minifiedText } },
    );
    expect(put.status).toBe(201);
    expect(put.body).toMatchObject({ file: url, size_bytes: Buffer.byteLength(minifiedText) });
    expect(put.body.name).toMatch(/\/releases\/3\.7\.1\/minified_sources\/msrc_/);
    const list = await call<{ minified_sources: { file: string }[] }>(t.s.web.url, 'GET', `${base}/minified_sources`, {
      key: t.env.secretKey,
    });
    expect(list.body.minified_sources.map((m) => m.file)).toEqual([url]);

    expect(sites.length).toBeGreaterThan(5);
    const uid = await capture(t.s.web, t.env, {
      event_time: '2026-11-25T10:00:00Z',
      exception_type: 'TypeError',
      message: 'boom',
      stack: stackOf(sites),
      release: '3.7.1',
    });
    const frames = (await readStored(t.s.web, t.env, uid)).body.stack_frames as StackFrame[];
    // Frames innermost last; the sites were printed innermost first.
    expect(frames.map((f) => f.function)).toEqual(sites.map((x) => x.truth).reverse());
    expect(frames.every((f) => f.file === 'jquery.js' && f.generated?.file === url)).toBe(true);
  });

  it('refuses what is not a minified file upload, and stores nothing for it', async () => {
    const wideName = Array.from({ length: 2000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20000))).join(
      '',
    );
    const base = `${envBase(t.env)}/releases/r-bad`;
    for (const body of [
      { file: url },
      { file: url, source: '' },
      { file: '', source: 'x' },
      { file: url, source: 'a\u0000b' },
      { file: url, source: 'x', extra: 1 },
      // 2,000 characters of 3 bytes each: past the 2048 bytes a name may have (Postgres indexes ~2.7 kB of a row).
      { file: wideName, source: 'x' },
    ]) {
      const res = await call<{ code: string }>(t.s.web.url, 'PUT', `${base}/minified_sources`, {
        key: t.env.secretKey,
        body,
      });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_request');
    }
    const list = await call<{ minified_sources: unknown[] }>(t.s.web.url, 'GET', `${base}/minified_sources`, {
      key: t.env.secretKey,
    });
    expect(list.body.minified_sources).toEqual([]);
    const anonymous = await call(t.s.web.url, 'PUT', `${base}/minified_sources`, { body: { file: url, source: 'x' } });
    expect(anonymous.status).toBe(401);
  });
});

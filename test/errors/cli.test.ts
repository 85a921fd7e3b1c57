// The error-tracking commands through commander and the SDK, against the real web process (in
// process: src/cli/main.ts wires `register` in for the `cairn` binary).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register } from '../../src/cli/commands/errors.ts';
import { createCliContext } from '../../src/cli/admin-context.ts';
import { capture, groupIdOf, readStored, sampleEvent, useStack } from './support.ts';

const t = useStack();
let tmp: string;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'cairn-cli-'));
});
afterAll(async () => {
  rmSync(tmp, { recursive: true, force: true });
});

/** Runs `cairn <args>` in process and answers what it printed on stdout. */
async function cairn(args: string[]): Promise<string> {
  const ctx = createCliContext({
    CAIRN_API_URL: t.s.web.url,
    CAIRN_SECRET_KEY: t.env.secretKey,
    CAIRN_ENV: t.env.env.name,
  });
  const program = new Command('cairn').exitOverride();
  register(program, ctx);
  let out = '';
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => {
    out += chunk;
    return true;
  }) as typeof process.stdout.write;
  try {
    await program.parseAsync(args, { from: 'user' });
  } finally {
    process.stdout.write = write;
    await ctx.close();
  }
  return out;
}

describe('cairn error-groups, error-events, source-maps', () => {
  it('lists, reads and triages with --etag, with --json', async () => {
    const uid = await capture(t.s.web, t.env, sampleEvent());
    const group = groupIdOf((await readStored(t.s.web, t.env, uid)).body.name);
    const list = JSON.parse(await cairn(['error-groups', 'list', '--json'])) as {
      error_groups: { uid: string; etag: string }[];
    };
    expect(list.error_groups.map((g) => g.uid)).toEqual([group]);
    expect(await cairn(['error-groups', 'list'])).toContain(group);
    const acked = JSON.parse(
      await cairn(['error-groups', 'acknowledge', group, '--etag', list.error_groups[0]!.etag, '--json']),
    ) as { state: string };
    expect(acked.state).toBe('acknowledged');
    await expect(cairn(['error-groups', 'resolve', group, '--etag', list.error_groups[0]!.etag])).rejects.toMatchObject(
      { code: 'ETAG_MISMATCH' },
    );
    const event = JSON.parse(await cairn(['error-events', 'get', uid, '--json'])) as { uid: string };
    expect(event.uid).toBe(uid);
    expect(await cairn(['error-events', 'list', group])).toContain(uid);
  });

  it('list --q passes a search through, --sort orders; a bad search or sort is refused', async () => {
    const other = await capture(
      t.s.web,
      t.env,
      sampleEvent({ exception_type: 'RangeError', message: 'Invalid array length' }),
    );
    const group = groupIdOf((await readStored(t.s.web, t.env, other)).body.name);
    const found = JSON.parse(
      await cairn(['error-groups', 'list', '--q', '"invalid array" is:unresolved', '--sort', 'events', '--json']),
    ) as { error_groups: { uid: string; user_count: number }[] };
    expect(found.error_groups).toEqual([expect.objectContaining({ uid: group, user_count: 0 })]);
    expect(await cairn(['error-groups', 'list', '--q', 'rangeerror'])).toMatch(new RegExp(`^${group} .* 0 users `));
    await expect(cairn(['error-groups', 'list', '--q', 'browser:'])).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('"browser:"'),
    });
    await expect(cairn(['error-groups', 'list', '--sort', 'oldest'])).rejects.toThrow('--sort is last_seen');
  });

  it('prints an event with its linked exceptions and the lines it could not read', async () => {
    const stack = [
      'Error: outer',
      '    at f (/srv/app/a.js:1:2) {',
      '  [cause]: TypeError: inner',
      '      at g (/srv/app/b.js:3:4)',
      '}',
    ].join('\n');
    const uid = await capture(
      t.s.web,
      t.env,
      sampleEvent({ exception_type: 'Error', message: 'outer', stack: `${stack}\nnot a frame` }),
    );
    await readStored(t.s.web, t.env, uid);
    const printed = await cairn(['error-events', 'get', uid]);
    expect(printed).toContain('    at f (/srv/app/a.js:1:2)');
    expect(printed).toContain('  [cause]: TypeError: inner\n      at g (/srv/app/b.js:3:4)');
    expect(printed).toContain('1 line(s) of the stack not understood: "not a frame"');
    const plain = await capture(
      t.s.web,
      t.env,
      sampleEvent({ stack: 'TypeError: x\n    at f (/srv/app/a.js:1:2)\n    at ???' }),
    );
    await readStored(t.s.web, t.env, plain);
    expect(await cairn(['error-events', 'get', plain])).toContain('1 line(s) of the stack not understood: "at ???"');
  });

  it('batch-updates groups by <id>=<etag>, and fails when a group was left as it is', async () => {
    const ids: string[] = [];
    for (const exception_type of ['BatchOneError', 'BatchTwoError'])
      ids.push(
        groupIdOf(
          (await readStored(t.s.web, t.env, await capture(t.s.web, t.env, sampleEvent({ exception_type })))).body.name,
        ),
      );
    const read = async (id: string) =>
      JSON.parse(await cairn(['error-groups', 'get', id, '--json'])) as { etag: string };
    // One at a time: `cairn` takes over stdout while it runs.
    const before = [await read(ids[0]!), await read(ids[1]!)];
    const args = ids.map((id, i) => `${id}=${before[i]!.etag}`);
    const out = await cairn(['error-groups', 'batch-update', '--action', 'resolve', ...args]);
    expect(out.split('\n').filter((l) => l.includes('resolved'))).toHaveLength(2);
    await expect(cairn(['error-groups', 'batch-update', '--action', 'reopen', args[0]!])).rejects.toThrow(
      '1 of 1 groups were left as they are',
    );
    await expect(cairn(['error-groups', 'batch-update', '--action', 'resolve', ids[0]!])).rejects.toThrow(
      'write each group as <id>=<etag>',
    );
  });

  it('uploads and lists source maps', async () => {
    const path = join(tmp, 'main.js.map');
    writeFileSync(path, JSON.stringify({ version: 3, sources: ['a.ts'], names: [], mappings: 'AAAA' }));
    const up = JSON.parse(
      await cairn(['source-maps', 'upload', path, '--release', 'r1', '--file', 'https://x.io/main.js', '--json']),
    ) as { file: string };
    expect(up.file).toBe('https://x.io/main.js');
    expect(await cairn(['source-maps', 'list', '--release', 'r1'])).toContain('https://x.io/main.js');
  });

  it('uploads and lists minified files', async () => {
    const path = join(tmp, 'main.min.js');
    writeFileSync(path, 'function a(b){return b.c()}');
    expect(
      await cairn(['minified-sources', 'upload', path, '--release', 'r1', '--file', 'https://x.io/main.min.js']),
    ).toBe('uploaded https://x.io/main.min.js for release r1 (27 bytes)\n');
    expect(await cairn(['minified-sources', 'list', '--release', 'r1'])).toContain('https://x.io/main.min.js  27 B');
    await expect(
      cairn(['minified-sources', 'upload', join(tmp, 'missing.js'), '--release', 'r1', '--file', 'x']),
    ).rejects.toThrow(/could not be read/);
  });
});

// Progress of long backup commands: a bar redrawn in place with bytes and rate on a terminal,
// plain lines on a pipe or with --json (one per 10 % with a total, else one every 5 s), from a
// fake clock; and a running backup shows the bytes its worker stored so far.
import { expect, it } from 'vitest';
import { progressBar } from '../../src/cli/progress.ts';
import { backupResource } from '../../src/domain/backups/present.ts';
import type { BackupRow } from '../../src/domain/backups/queries.ts';

function sink(isTTY: boolean) {
  const lines: string[] = [];
  return { out: { isTTY, write: (s: string) => (lines.push(s), true) }, lines };
}

const MiB = 2 ** 20;

it('on a terminal redraws one line with the bar, the bytes and the rate', () => {
  let t = 0;
  const { out, lines } = sink(true);
  const bar = progressBar('restoring', out, { now: () => t });
  t = 2000;
  bar(10 * MiB, 40 * MiB);
  expect(lines).toEqual([`\rrestoring [########......................] 25% 10.0 MiB / 40.0 MiB at 5.0 MiB/s   `]);
  t = 8000;
  bar(40 * MiB, 40 * MiB);
  expect(lines.at(-2)).toContain('100% 40.0 MiB / 40.0 MiB at 5.0 MiB/s');
  expect(lines.at(-1)).toBe('\n');
});

it('on a pipe, or with --json, writes a plain line per 10 %, or every 5 s without a total', () => {
  let t = 0;
  const piped = sink(false);
  const bar = progressBar('verifying', piped.out, { now: () => t });
  for (let i = 1; i <= 20; i++) {
    t = i * 100;
    bar(i * MiB, 20 * MiB);
  }
  expect(piped.lines).toHaveLength(11);
  expect(piped.lines[0]).toBe('verifying: 5% (1.0 MiB / 20.0 MiB)\n');
  expect(piped.lines.at(-1)).toBe('verifying: 100% (20.0 MiB / 20.0 MiB at 10.0 MiB/s)\n');

  t = 0;
  const json = sink(true);
  const open = progressBar('backup', json.out, { plain: true, now: () => t });
  for (let s = 1; s <= 12; s++) {
    t = s * 1000;
    open(s * 3 * MiB, undefined);
  }
  expect(json.lines).toEqual([
    'backup: 3.0 MiB at 3.0 MiB/s\n',
    'backup: 18.0 MiB at 3.0 MiB/s\n',
    'backup: 33.0 MiB at 3.0 MiB/s\n',
  ]);
});

it('shows a running backup’s stored bytes, and nothing once it ended', () => {
  const row = {
    id: 'backup_x',
    state: 'running',
    type: 'manual',
    trigger: 'manual',
    object_key: 'k',
    size_bytes: null,
    sha256: null,
    billable: false,
    duration_ms: null,
    pg_version: null,
    pg_dump_version: null,
    key_id: null,
    error: null,
    verified_time: null,
    verification: null,
    create_time: new Date(0),
    start_time: new Date(0),
    finish_time: null,
    expire_time: new Date(0),
    progress_bytes: '5242880',
  } as unknown as BackupRow;
  expect(backupResource(row).progress_bytes).toBe(5 * MiB);
  expect(backupResource({ ...row, state: 'succeeded' })).not.toHaveProperty('progress_bytes');
});

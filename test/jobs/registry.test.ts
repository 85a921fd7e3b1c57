// The queue runtime sits below the features and the web never loads worker code: read from the
// modules' static imports. Each feature's queues reach the one registry, none declared twice.
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { alertQueues } from '../../src/domain/alerts/queues.ts';
import { backupQueues } from '../../src/domain/backups/queues.ts';
import { errorQueues } from '../../src/domain/errors/queues.ts';
import { identityQueues } from '../../src/domain/identity/queues.ts';
import { webhookQueues } from '../../src/domain/webhooks/queues.ts';
import { defineQueue } from '../../src/jobs/index.ts';
import { mailQueues } from '../../src/mail/queues.ts';
import { queues, schedules } from '../../src/queues.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Every module `entry` loads through relative imports, static or dynamic, as repository paths. */
function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(join(root, file), 'utf8');
    for (const m of source.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+\.ts)'/g)) {
      const target = normalize(join(dirname(file), m[1]!));
      if (existsSync(join(root, target))) stack.push(target);
    }
  }
  return seen;
}

describe('layers', () => {
  it('keeps the queue runtime free of features: it loads only base modules', () => {
    const loaded = [...reachable('src/jobs/index.ts'), ...reachable('src/jobs/claims/reaper.ts')];
    expect(loaded.filter((f) => f.startsWith('src/domain/') || f === 'src/queues.ts')).toEqual([]);
    expect(loaded).toContain('src/jobs/boss.ts');
  });

  it('never loads worker code in the web process', () => {
    const loaded = [...reachable('src/web.ts')];
    expect(loaded).toContain('src/queues.ts');
    expect(
      loaded.filter((f) => f.startsWith('workers/') || f === 'src/worker.ts' || f.startsWith('src/jobs/claims/')),
    ).toEqual([]);
  });
});

describe('the registry', () => {
  it("holds every feature's queues, each name declared once", () => {
    const features = [errorQueues, identityQueues, mailQueues, backupQueues, webhookQueues, alertQueues];
    const names = features.flatMap((f) => Object.keys(f));
    expect(new Set(names).size).toBe(names.length);
    expect(Object.keys(queues).sort()).toEqual(names.sort());
  });

  it('schedules only queues it holds', () => {
    for (const s of schedules) expect(Object.keys(queues)).toContain(s.queue);
  });

  it('declares a queue by name, schema and options', () => {
    const schema = z.object({ id: z.string() });
    const declared = defineQueue('test.one', schema, { retryLimit: 3, batchSize: 4 });
    expect(declared).toEqual({ 'test.one': { schema, retryLimit: 3, batchSize: 4 } });
    expect(defineQueue('test.bare', schema)).toEqual({ 'test.bare': { schema } });
  });
});

// An event's facets (src/domain/errors/pipeline/facets.ts) against golden fixtures: its tags with
// the built-in `release` and `level`, the user it names, and the bounds; and, through the real
// pipeline, that they are read from the scrubbed event: no secret of the capture reaches them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createPipelineCaches } from '../../src/domain/errors/pipeline/caches.ts';
import { facetLimits, facetsOf, type FacetSource } from '../../src/domain/errors/pipeline/facets.ts';
import { processEvent } from '../../src/domain/errors/pipeline/process.ts';
import { compilePolicy, defaultPolicy } from '../../src/domain/errors/scrubbing/scrub.ts';
import { fromSentryEvent } from '../../src/domain/errors/sentry/event.ts';

const golden = JSON.parse(readFileSync(new URL('./fixtures/facets/golden.json', import.meta.url), 'utf8')) as {
  name: string;
  event: FacetSource;
  expected: unknown;
}[];

describe('facets of a stored event (golden fixtures)', () => {
  for (const c of golden) {
    it(c.name, () => {
      expect(facetsOf(c.event)).toEqual(c.expected);
    });
  }
});

describe('bounds', () => {
  it('keep at most 64 client tags, then the built-ins', () => {
    const tags = Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`k${i}`, `v${i}`]));
    const out = facetsOf({ tags, release: 'r1' }).tags;
    expect(out).toHaveLength(facetLimits.tags + 2);
    expect(out.at(facetLimits.tags - 1)).toEqual(['k63', 'v63']);
    expect(out.slice(-2)).toEqual([
      ['release', 'r1'],
      ['level', 'error'],
    ]);
  });

  it('drop a tag whose key is over 32 or value over 200 characters, rather than cut it', () => {
    const tags = { ['k'.repeat(33)]: 'v', long: 'x'.repeat(201), edge: 'y'.repeat(200), ['e'.repeat(32)]: 'ok' };
    expect(facetsOf({ tags }).tags).toEqual([
      ['edge', 'y'.repeat(200)],
      ['e'.repeat(32), 'ok'],
      ['level', 'error'],
    ]);
  });

  it('take a user field over 128 characters for absent', () => {
    const user = { id: '1'.repeat(129), email: `${'a'.repeat(120)}@b.io`, username: 'u'.repeat(128) };
    expect(facetsOf({ tags: {}, sentry: { user } }).user).toEqual({
      user_key: `email:${user.email}`,
      email: user.email,
      username: user.username,
    });
  });
});

describe('through the pipeline', () => {
  it('are the scrubbed event’s: a secret in a tag or in the user never reaches them', async () => {
    const event = fromSentryEvent(
      {
        level: 'warning',
        release: 'web@3',
        tags: { session_token: 'plant-token-1', note: 'see postgres://app:plant-password@db/app', level: 'info' },
        user: { id: 'user-7', email: 'plant-mail@example.com', username: 'ada' },
        exception: { values: [{ type: 'Error', value: 'boom' }] },
      },
      new Date('2026-11-28T12:00:00Z'),
    );
    const processed = await processEvent(event, {
      maps: [],
      load: () => Promise.reject(new Error('no maps here')),
      policy: compilePolicy(defaultPolicy),
      caches: createPipelineCaches(),
    });
    const facets = facetsOf(processed.head);
    expect(JSON.stringify(facets)).not.toContain('plant-');
    expect(facets.tags).toContainEqual(['session_token', '[Filtered]']);
    expect(facets.tags.slice(-2)).toEqual([
      ['release', 'web@3'],
      ['level', 'warning'],
    ]);
    expect(facets.user).toEqual({ user_key: 'id:user-7', user_id: 'user-7', username: 'ada' });
  });
});

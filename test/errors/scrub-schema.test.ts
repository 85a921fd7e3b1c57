// Scrubbing by schema: every string of an event is scrubbed unless its field is marked safe, so a
// field nobody named (a future Sentry `extra`, a new frame field) is scrubbed all the same.
import { describe, expect, it } from 'vitest';
import { createScrubber, defaultPolicy } from '../../src/domain/errors/scrubbing/scrub.ts';
import { eventHeadSchema, frameSchema, scrubBySchema } from '../../src/domain/errors/scrubbing/schema.ts';

const secret = 'cairn_sk_live_' + 'a'.repeat(40);

describe('scrubBySchema', () => {
  it('scrubs fields it does not know, at any depth, and keeps only those marked safe', () => {
    const s = createScrubber(defaultPolicy);
    const out = scrubBySchema(
      {
        event_time: '2026-11-25T10:00:00.000Z',
        release: 'web@1.2.3',
        message: `key ${secret}`,
        contexts: { app: { note: `mail jane@example.com`, n: 3, deep: [`Bearer ${'t'.repeat(20)}`] } },
        tags: { password: 'hunter2', route: '/x?token=abcdef123' },
        breadcrumbs: [
          { level: 'info', type: 'http', message: 'GET /users/jane@example.com', data: { api_key: 'k', n: 1 } },
        ],
      },
      eventHeadSchema,
      s,
    );
    expect(out).toEqual({
      event_time: '2026-11-25T10:00:00.000Z',
      release: 'web@1.2.3',
      message: 'key [Filtered]',
      contexts: { app: { note: 'mail [Filtered]', n: 3, deep: ['Bearer [Filtered]'] } },
      tags: { password: '[Filtered]', route: '/x?token=[Filtered]' },
      breadcrumbs: [
        { level: 'info', type: 'http', message: 'GET /users/[Filtered]', data: { api_key: '[Filtered]', n: 1 } },
      ],
    });
    expect(s.counts()).toMatchObject({ cairn_secret_key: 1, email: 2, bearer: 1, sensitive_key: 2, query_secret: 1 });
  });

  it('scrubs a frame field added later, and keeps positions and reasons as they are', () => {
    const s = createScrubber(defaultPolicy);
    const frame = {
      function: 'f',
      file: `/srv/a.js?token=${'x'.repeat(10)}`,
      line: 3,
      column: 4,
      in_app: true,
      unmapped_reason: 'no_release',
      hint: `to jane@example.com`,
    };
    expect(scrubBySchema(frame, frameSchema, s)).toEqual({
      ...frame,
      file: '/srv/a.js?token=[Filtered]',
      hint: 'to [Filtered]',
    });
    expect(frame.hint).toBe('to jane@example.com');
  });
});

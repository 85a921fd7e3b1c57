// The default scrubbing policy against a secret corpus: each secret goes, the text around it
// stays, the rule is counted; ordinary text stays as it is; policies switch rules off and add keys;
// hostile input costs linear time.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createScrubber, defaultPolicy } from '../../src/domain/errors/scrubbing/scrub.ts';
import { frameSchema, scrubBySchema } from '../../src/domain/errors/scrubbing/schema.ts';
import { isCardNumber, luhn } from '../../src/domain/errors/scrubbing/rules.ts';

const corpus = JSON.parse(readFileSync(new URL('./fixtures/secrets.json', import.meta.url), 'utf8')) as {
  secrets: { rule: string; text: string; secret: string }[];
  keep: string[];
};

describe('default policy', () => {
  for (const { rule, text, secret } of corpus.secrets) {
    it(`${rule}: removes ${JSON.stringify(secret.slice(0, 24))} and keeps the rest`, () => {
      const s = createScrubber(defaultPolicy);
      const out = s.text(text);
      expect(out).not.toContain(secret);
      expect(out).toContain('[Filtered]');
      expect(s.counts()[rule]).toBeGreaterThanOrEqual(1);
      // The words around the secret survive.
      const [before] = text.split(secret);
      const firstWord = before!.trim().split(/\s+/)[0];
      if (firstWord && !firstWord.includes('-----')) expect(out).toContain(firstWord);
    });
  }

  for (const text of corpus.keep) {
    it(`keeps ${JSON.stringify(text)}`, () => {
      const s = createScrubber(defaultPolicy);
      expect(s.text(text)).toBe(text);
      expect(s.counts()).toEqual({});
    });
  }

  it('replaces the values of sensitive keys whole, and counts them', () => {
    const s = createScrubber(defaultPolicy);
    expect(s.keyed('session_token', 'abc')).toBe('[Filtered]');
    expect(s.keyed('Authorization', 'whatever')).toBe('[Filtered]');
    expect(s.keyed('route', '/users/:id')).toBe('/users/:id');
    expect(s.counts()).toEqual({ sensitive_key: 2 });
  });

  it('scrubs what is already scrubbed to the same text (idempotent)', () => {
    const s = createScrubber(defaultPolicy);
    const once = s.text(corpus.secrets.map((c) => c.text).join('\n'));
    expect(createScrubber(defaultPolicy).text(once)).toBe(once);
  });

  it('checks cards with Luhn and issuer prefixes', () => {
    expect(luhn('4111111111111111')).toBe(true);
    expect(luhn('4111111111111112')).toBe(false);
    expect(isCardNumber('1700000000000')).toBe(false);
    expect(createScrubber(defaultPolicy).text('id 4111111111111112')).toBe('id 4111111111111112');
  });

  it('costs linear time on hostile input', () => {
    const hostile = [
      'a'.repeat(65_536),
      `${'a.'.repeat(30_000)}@`,
      `${'1 '.repeat(30_000)}`,
      `password=${'x'.repeat(60_000)}`,
      ':'.repeat(65_536),
    ];
    for (const text of hostile) {
      const started = performance.now();
      createScrubber(defaultPolicy).text(text);
      expect(performance.now() - started).toBeLessThan(250);
    }
  });
});

describe('policies', () => {
  it('switch rules off and add sensitive keys', () => {
    const s = createScrubber({ use_default_rules: true, disabled_rules: ['ipv4'], sensitive_keys: ['ssn'] });
    expect(s.text('from 10.0.0.1 as a@b.io')).toBe('from 10.0.0.1 as [Filtered]');
    expect(s.keyed('SSN', '123-45-6789')).toBe('[Filtered]');
  });

  it('with the default rules off, only the named keys go', () => {
    const s = createScrubber({ use_default_rules: false, disabled_rules: [], sensitive_keys: ['ssn'] });
    expect(s.text('password=hunter2')).toBe('password=hunter2');
    expect(s.keyed('ssn', 'x')).toBe('[Filtered]');
  });
});

describe('code locations', () => {
  it("keeps the host a frame's script was served from, and still takes secrets out of its URL", () => {
    const frame = {
      file: 'http://127.0.0.1:8080/app.js?token=sk_live_abcdefghijklmnop1234',
      function: 'handlers.[::1]',
      context_line: 'fetch("http://10.0.0.7/api")',
      generated: { file: 'http://[2001:db8::1]/bundle.min.js', function: 'a', line: 1, column: 2 },
    };
    const s = createScrubber(defaultPolicy);
    const out = scrubBySchema(frame, frameSchema, s);
    expect(out.file).toBe('http://127.0.0.1:8080/app.js?token=[Filtered]');
    expect(out.function).toBe('handlers.[::1]');
    expect(out.generated.file).toBe('http://[2001:db8::1]/bundle.min.js');
    // Context lines are the application's code: addresses in them are still free text.
    expect(out.context_line).toBe('fetch("http://[Filtered]/api")');
    expect(s.counts()).toEqual({ query_secret: 1, ipv4: 1 });
    // And the same strings as free text lose their hosts.
    expect(createScrubber(defaultPolicy).text(frame.file)).toBe('http://[Filtered]:8080/app.js?token=[Filtered]');
  });

  it('removes a secret parameter whole however long its value is', () => {
    const token = 'k'.repeat(6000);
    const s = createScrubber(defaultPolicy);
    expect(s.text(`GET /cb?token=${token}&page=2 then /x?a=1&session=${token}#top`)).toBe(
      'GET /cb?token=[Filtered]&page=2 then /x?a=1&session=[Filtered]#top',
    );
    expect(s.counts()).toEqual({ query_secret: 2 });
  });
});

// The pure parts of alert rules: the console's form read into the API's body (each refusal in the
// form's words; any input read without throwing), and a Slack URL's hint (never more than four
// characters of what follows the origin).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readAlertForm, type AlertFormFields } from '../../src/console/pages/alert-form.ts';
import { slackHint } from '../../src/domain/alerts/rules/actions.ts';

const form = (f: Partial<AlertFormFields>): AlertFormFields => ({
  name: 'Bursts',
  when: 'new_group',
  events: '',
  window: '',
  q: '',
  emails: 'a@example.com',
  slack: '',
  snooze: '30',
  ...f,
});

describe('the alerts form', () => {
  it('reads a frequency rule with emails and a Slack URL', () => {
    expect(
      readAlertForm(
        form({
          when: 'frequency',
          events: ' 100 ',
          window: '60',
          q: 'service:checkout',
          emails: 'a@example.com, b@example.com;c@example.com\nA@example.com a@example.com',
          slack: ' https://hooks.slack.com/services/T/B/x ',
          snooze: '0',
        }),
      ),
    ).toEqual({
      rule: {
        name: 'Bursts',
        when: 'frequency',
        threshold: { events: 100, window_minutes: 60 },
        q: 'service:checkout',
        actions: [
          { type: 'email', to: ['a@example.com', 'b@example.com', 'c@example.com', 'A@example.com'] },
          { type: 'slack', url: 'https://hooks.slack.com/services/T/B/x' },
        ],
        snooze_minutes: 0,
        state: 'enabled',
      },
    });
  });

  it('leaves the threshold fields out of other kinds, and defaults the snooze', () => {
    const read = readAlertForm(form({ when: 'regression', events: '5', window: '5', snooze: '' }));
    expect(read).toEqual({
      rule: {
        name: 'Bursts',
        when: 'regression',
        q: '',
        actions: [{ type: 'email', to: ['a@example.com'] }],
        snooze_minutes: 30,
        state: 'enabled',
      },
    });
  });

  it('says each refusal in the words of the form', () => {
    expect(readAlertForm(form({ emails: ' , ', slack: ' ' }))).toEqual({
      problems: ['Say whom to tell: email addresses, a Slack incoming-webhook URL, or both.'],
    });
    expect(readAlertForm(form({ emails: 'ok@example.com nope' }))).toEqual({
      problems: ['Email addresses: nope is not a valid address.'],
    });
    const read = readAlertForm(form({ name: '', when: 'frequency', events: 'ten', window: '1441', snooze: '-1' }));
    expect(read.problems?.map((p) => p.slice(0, p.indexOf(':')))).toEqual([
      'Name',
      'Events',
      'Within minutes',
      'Quiet minutes per error group',
    ]);
    expect(readAlertForm(form({ when: 'frequency' })).problems).toEqual([
      'Threshold: a frequency rule needs a threshold',
    ]);
  });

  it('reads any form without throwing: a rule, or at least one problem', () => {
    const field = fc.option(fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('frequency', '12', 'a@b.co')), {
      nil: undefined,
    });
    const fields = fc.record({
      name: field,
      when: field,
      events: field,
      window: field,
      q: field,
      emails: field,
      slack: field,
      snooze: field,
    });
    fc.assert(
      fc.property(fields, (f) => {
        const read = readAlertForm(f);
        if ('rule' in read) expect(read.rule.actions.length).toBeGreaterThan(0);
        else expect(read.problems.length).toBeGreaterThan(0);
      }),
    );
  });
});

describe('slackHint', () => {
  it('shows the origin and at most the last four characters of the path and query', () => {
    const url = fc.webUrl({ withQueryParameters: true }).filter((u) => !u.includes('#'));
    fc.assert(
      fc.property(url, (raw) => {
        const u = new URL(raw);
        const rest = u.pathname + u.search;
        const hint = slackHint(u.href);
        expect(hint.startsWith(`${u.origin}/…`)).toBe(true);
        const shown = hint.slice(`${u.origin}/…`.length);
        expect(shown.length).toBeLessThanOrEqual(4);
        expect(rest.endsWith(shown)).toBe(true);
        if (rest.length < 12) expect(shown).toBe('');
      }),
    );
  });
});

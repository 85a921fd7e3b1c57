// What a firing says is a pure function of its facts: golden files for each reason's mail (subject,
// text, HTML) and Slack body, with a title that tries HTML, Slack's control characters, a mention
// and a line break. CAIRN_UPDATE_GOLDEN=1 rewrites them (review the diff).
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mailHtml, mailText, slackBody, subject, type MessageInput } from '../../src/domain/alerts/send/message.ts';

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url);
function golden(name: string, actual: string): void {
  if (process.env.CAIRN_UPDATE_GOLDEN === '1') writeFileSync(fixture(name), actual);
  expect(actual).toBe(readFileSync(fixture(name), 'utf8'));
}

const facts = {
  title: 'TypeError: <img src=x onerror=alert(1)> & <!channel> @here\nsecond line',
  culprit: 'renderUser(src/users.js)',
  environment: 'orgs/acme/projects/shop/envs/prod',
  count: 1234,
  window_minutes: null,
  release: 'shop@1.2.3',
  first_seen: '2026-11-21T12:00:00.123+00:00',
  last_seen: '2026-11-28T09:30:00+00:00',
  link: 'https://cairn.example.com/console/errors/eg_01jf0000000000000000000000',
};

const inputs: Record<string, MessageInput> = {
  new_group: { reason: 'new_group', rule_name: 'New errors', facts },
  regression: { reason: 'regression', rule_name: 'Regressions', facts: { ...facts, release: '' } },
  frequency: { reason: 'frequency', rule_name: 'Bursts', facts: { ...facts, count: 50, window_minutes: 5 } },
};

const render = (m: MessageInput): string =>
  [`Subject: ${subject(m)}`, '--- text', mailText(m), '--- html', mailHtml(m), '--- slack', slackBody(m), ''].join(
    '\n',
  );

describe('alert messages', () => {
  for (const [name, m] of Object.entries(inputs))
    it(`says what a ${name} firing found`, () => golden(`message-${name}.txt`, render(m)));

  it('keeps the subject on one line and the HTML free of the title’s markup', () => {
    const m = inputs.new_group!;
    expect(subject(m)).not.toMatch(/[\r\n]/);
    expect(mailHtml(m)).not.toContain('<img');
    const text = (JSON.parse(slackBody(m)) as { text: string }).text;
    expect(text).not.toMatch(/<!channel>|@here/);
  });
});

// The log `npm start` prints in a terminal: pino's lines as a person reads them. Golden lines made
// from lines the service itself writes (the request middleware's, a worker's warning, a mail).
import { describe, expect, it } from 'vitest';
import { readableDestination, readableLine, readableMail } from '../../src/log-readable.ts';

const time = Date.UTC(2026, 10, 28, 14, 5, 9);
const base = { level: 30, time, pid: 4242, hostname: 'box', name: 'cairn' };

describe('readable log lines', () => {
  it('prints a request as one line: method, path, status and time', () => {
    const line = {
      ...base,
      request_id: 'req_01',
      method: 'GET',
      path: '/v1/orgs/a',
      status: 200,
      ms: 3,
      msg: 'request',
    };
    expect(readableLine(line, { colour: false })).toBe('14:05:09 GET /v1/orgs/a 200 3 ms');
    expect(readableLine({ ...line, status: 503 }, { colour: true })).toBe(
      '\x1b[2m14:05:09\x1b[0m \x1b[31mGET /v1/orgs/a 503 3 ms\x1b[0m',
    );
  });

  it('marks warnings and errors, with their fields and an error by its message', () => {
    const warn = {
      ...base,
      level: 40,
      backup_id: 'bk_1',
      err: { type: 'Error', message: 'no route', stack: 'x' },
      msg: 'backup failed',
    };
    expect(readableLine(warn, { colour: false })).toBe('14:05:09 warn backup failed backup_id=bk_1 err=no route');
    expect(readableLine({ ...warn, level: 50 }, { colour: true })).toBe(
      '\x1b[2m14:05:09\x1b[0m \x1b[31merror \x1b[0mbackup failed \x1b[2mbackup_id=bk_1 err=no route\x1b[0m',
    );
  });

  it('keeps no control character of a field, so a value cannot drive the terminal', () => {
    const line = { ...base, msg: 'hello\x1b[2J', who: 'a\u009b31mb\nc' };
    expect(readableLine(line, { colour: false })).toBe('14:05:09 hello[2J who=a31mbc');
  });

  it('sets a mail apart, whole, with its newlines and without control characters', () => {
    const mail = {
      ...base,
      msg: 'mail written to the outbox',
      to: 'a@example.com',
      subject: 'Verify',
      mail_id: 'ml_1',
      text: 'Hi\x07\n\nhttps://x/verify?t=1\n',
    };
    expect(readableMail(mail)).toBe(
      '\n── mail to a@example.com: Verify (ml_1; again: npx cairn admin outbox list --env <env name>) ──\nHi\n\nhttps://x/verify?t=1\n──',
    );
    expect(readableMail({ ...base, msg: 'request' })).toBeNull();
  });

  it('writes readable lines, mails apart; with json, the JSON lines and the mails', () => {
    const sink = () => {
      const lines: string[] = [];
      return { lines, write: (s: string) => lines.push(s) !== 0, isTTY: false };
    };
    const request = JSON.stringify({ ...base, method: 'GET', path: '/', status: 404, ms: 1, msg: 'request' }) + '\n';
    const mail =
      JSON.stringify({ ...base, msg: 'mail written to the outbox', to: 'a@x', subject: 'S', mail_id: 'm', text: 'T' }) +
      '\n';
    const [out, mails] = [sink(), sink()];
    const readable = readableDestination(out, mails, { env: {} });
    readable.write(request);
    readable.write(mail);
    readable.write('not json\n');
    expect(out.lines).toEqual(['14:05:09 GET / 404 1 ms\n', 'not json\n']);
    expect(mails.lines).toEqual([`${readableMail(JSON.parse(mail))}\n`]);
    const [jsonOut, jsonMails] = [sink(), sink()];
    const json = readableDestination(jsonOut, jsonMails, { json: true, env: {} });
    json.write(request);
    json.write(mail);
    expect(jsonOut.lines).toEqual([request, mail]);
    expect(jsonMails.lines).toHaveLength(1);
  });

  it('paints only on a terminal that has not asked for no colour', () => {
    const lines: string[] = [];
    const tty = { write: (s: string) => lines.push(s) !== 0, isTTY: true };
    const warn = JSON.stringify({ ...base, level: 40, msg: 'w' }) + '\n';
    readableDestination(tty, tty, { env: { NO_COLOR: '1' } }).write(warn);
    readableDestination(tty, tty, { env: {} }).write(warn);
    expect(lines).toEqual(['14:05:09 warn w\n', '\x1b[2m14:05:09\x1b[0m \x1b[33mwarn \x1b[0mw\n']);
  });
});

// The words and codes of a database URL that did not connect, for the failures the suite's trust-auth
// server cannot produce (test/backups/set-database.test.ts meets the others on real servers): the
// errors are shaped as node-postgres and Node's sockets raise them.
import { describe, expect, it } from 'vitest';
import { databaseProblem } from '../../src/domain/backups/setup/problems.ts';

const url = 'postgres://app:hunter2-secret@db.internal:6543/shop';
const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('databaseProblem', () => {
  it.each([
    [
      pgError('28000', 'no pg_hba.conf entry for host "10.0.0.9", user "app", database "shop", no encryption'),
      'tls_required',
      'db.internal:6543 accepts only TLS connections: add ?sslmode=require',
    ],
    [
      pgError(
        '28000',
        'pg_hba.conf rejects connection for host "10.0.0.9", user "app", database "shop", SSL encryption',
      ),
      'access_refused',
      'db.internal:6543 refused role "app" on database "shop" (pg_hba.conf has no line that admits it from here)',
    ],
    [new Error('The server does not support SSL connections'), 'tls_unsupported', 'db.internal:6543 has no TLS'],
    [new Error('timeout expired'), 'timed_out', 'db.internal:6543 did not answer in time'],
    [
      new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string'),
      'password_failed',
      'refused the password of role "app"',
    ],
    [
      pgError('EAI_AGAIN', 'getaddrinfo EAI_AGAIN db.internal'),
      'host_not_found',
      'the host "db.internal" does not resolve',
    ],
    [
      pgError('28P01', 'password authentication failed for user "app"'),
      'password_failed',
      'postgres://app:<password>@db.internal:6543/shop',
    ],
  ])('names %s as its code, with the fix, never the password', (err, problem, words) => {
    const e = databaseProblem(url, err);
    expect(e).toMatchObject({ code: 'invalid_request', details: { problem } });
    expect(e.message).toContain(words);
    expect(e.message).not.toContain('hunter2-secret');
  });
});

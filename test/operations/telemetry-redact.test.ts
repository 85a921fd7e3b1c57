// Golden cases of what a span may say of a URL's query (src/telemetry/redact.ts): keys, never values.
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { incomingQueryAttributes, outgoingQueryAttributes, redactQuery } from '../../src/telemetry/redact.ts';

describe('redactQuery', () => {
  it.each([
    ['token=abc', 'token=REDACTED'],
    ['a=1&b=&c', 'a=REDACTED&b=REDACTED&REDACTED'],
    ['code=x%3Dy&state=s=t', 'code=REDACTED&state=REDACTED'],
    ['', ''],
    ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig', 'REDACTED'],
    ['a%20b=1', 'REDACTED=REDACTED'],
  ])('%s → %s', (query, want) => expect(redactQuery(query)).toBe(want));
});

describe('span hooks', () => {
  it('gives url.query for an incoming request with a query, nothing without one', () => {
    expect(incomingQueryAttributes({ url: '/v1/x?user_code=ABCD-EFGH' } as IncomingMessage)).toEqual({
      'url.query': 'user_code=REDACTED',
    });
    expect(incomingQueryAttributes({ url: '/v1/x' } as IncomingMessage)).toEqual({});
  });

  it('gives url.full with the query redacted for an outgoing request', () => {
    expect(
      outgoingQueryAttributes({ protocol: 'https:', hostname: 'hooks.example', port: 8443, path: '/in?key=s3cr3t' }),
    ).toEqual({ 'url.full': 'https://hooks.example:8443/in?key=REDACTED' });
    expect(outgoingQueryAttributes({ protocol: 'http:', host: '127.0.0.1:9', path: '/plain' })).toEqual({});
    expect(outgoingQueryAttributes({ protocol: 'https:', host: 'api.example', port: 8443, path: '/x?a=1' })).toEqual({
      'url.full': 'https://api.example:8443/x?a=REDACTED',
    });
    expect(outgoingQueryAttributes({ protocol: 'http:', hostname: '::1', port: 9000, path: '/x?a=1' })).toEqual({
      'url.full': 'http://[::1]:9000/x?a=REDACTED',
    });
    expect(outgoingQueryAttributes({ protocol: 'https:', hostname: 'h.example', port: 443, path: '/x?a' })).toEqual({
      'url.full': 'https://h.example/x?REDACTED',
    });
    expect(outgoingQueryAttributes({ protocol: 'http:', host: 'h.example:8080', path: '/x?a=1' })).toEqual({
      'url.full': 'http://h.example:8080/x?a=REDACTED',
    });
  });
});

// The pure parts against fixed vectors: Standard Webhooks signatures (the spec's own example, and
// the `standardwebhooks` package's signer), the retry schedule and the message body.
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { messageBody } from '../../src/domain/webhooks/outbox/catalogue.ts';
import { nextLane, quickSuccessesToFast } from '../../src/domain/webhooks/deliveries/lanes.ts';
import { maxAttempts, retryDelaySeconds } from '../../src/domain/webhooks/deliveries/schedule.ts';
import { newSecret, secretKey, signMessage } from '../../src/domain/webhooks/endpoints/sign.ts';

describe('signMessage', () => {
  it("matches the Standard Webhooks specification's example", () => {
    // standard-webhooks/spec.md, "Signature scheme": this secret, id, timestamp and payload.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = '{"test": 2432232314}';
    const headers = signMessage([secret], 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, body);
    expect(headers).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });

  it("agrees with the standardwebhooks package's signer, one signature per secret", () => {
    const [a, b] = [newSecret(), newSecret()];
    const at = new Date('2026-11-26T12:00:00Z');
    const body = messageBody({ envId: 'env_x', type: 'end_user.created', subject: 'eu_x', data: { id: 'eu_x' } }, at);
    const headers = signMessage([a, b], 'whmsg_01jdx3k6r9m2w8q4t7v5b1c0yz', at.getTime() / 1000, body);
    const [first, second] = headers['webhook-signature'].split(' ');
    expect(first).toBe(new Webhook(a).sign('whmsg_01jdx3k6r9m2w8q4t7v5b1c0yz', at, body));
    expect(second).toBe(new Webhook(b).sign('whmsg_01jdx3k6r9m2w8q4t7v5b1c0yz', at, body));
  });

  it('makes secrets of 32 random bytes in standard padded base64', () => {
    const s = newSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secretKey(s)).toHaveLength(32);
    expect(newSecret()).not.toBe(s);
    expect(() => secretKey('sk_abc')).toThrow(/whsec_/);
  });
});

describe('the retry schedule', () => {
  it('is about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: eight attempts', () => {
    const none = () => 0;
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelaySeconds(n, none))).toEqual([
      5, 300, 1800, 7200, 18000, 36000, 36000,
    ]);
    expect(retryDelaySeconds(8, none)).toBeUndefined();
    expect(maxAttempts).toBe(8);
    // Jitter adds at most a tenth.
    expect(retryDelaySeconds(2, () => 0.999)).toBe(330);
  });
});

describe('messages', () => {
  it('have the body {type, timestamp, data}, the timestamp in RFC 3339', () => {
    const body = messageBody(
      { envId: 'env_x', type: 'backup.failed', subject: 'backup_x', data: { id: 'backup_x' }, time: new Date(0) },
      new Date(),
    );
    expect(body).toBe('{"type":"backup.failed","timestamp":"1970-01-01T00:00:00.000Z","data":{"id":"backup_x"}}');
  });
});

describe('nextLane', () => {
  it('moves a slow endpoint to the fast lane at its third quick success in a row, and any other attempt back', () => {
    expect(quickSuccessesToFast).toBe(3);
    const steps: [boolean, { slow: boolean; quick_successes: number }][] = [
      [true, { slow: true, quick_successes: 1 }],
      [true, { slow: true, quick_successes: 2 }],
      [false, { slow: true, quick_successes: 0 }],
      [true, { slow: true, quick_successes: 1 }],
      [true, { slow: true, quick_successes: 2 }],
      [true, { slow: false, quick_successes: 0 }],
      [true, { slow: false, quick_successes: 0 }],
      [false, { slow: true, quick_successes: 0 }],
    ];
    let lane = { slow: true, quick_successes: 0 };
    for (const [quick, expected] of steps) {
      lane = nextLane(lane, quick);
      expect(lane).toEqual(expected);
    }
  });

  it('keeps an endpoint answering every other attempt in the slow lane', () => {
    let lane = { slow: true, quick_successes: 0 };
    for (let i = 0; i < 100; i++) lane = nextLane(lane, i % 2 === 0);
    expect(lane.slow).toBe(true);
  });
});

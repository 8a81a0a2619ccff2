import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withSessionCookie } from '../../src/gateway/session-key.ts';
import { SessionSigner } from '../../src/gateway/session-signer.ts';

describe('SessionSigner', () => {
  const signer = new SessionSigner('s'.repeat(32));

  it('issues distinct cookie-safe keys of 128 random bits and a 128-bit MAC that verify', () => {
    const a = signer.issue();
    const b = signer.issue();
    assert.match(a, /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}$/);
    assert.notEqual(a, b);
    assert.ok(signer.verify(a));
    assert.ok(signer.verify(b));
  });

  it('refuses unsigned, truncated, tampered and other-secret keys', () => {
    const key = signer.issue();
    const [id, mac] = key.split('.') as [string, string];
    const flip = (s: string, at: number) => s.slice(0, at) + (s[at] === 'a' ? 'b' : 'a') + s.slice(at + 1);
    for (const bad of [
      '11',
      '',
      key.slice(0, -1),
      `${key}x`,
      `${flip(id, 0)}.${mac}`,
      `${id}.${flip(mac, 5)}`,
      `${id}.${mac.slice(0, 21)}é`,
      `${id}-${mac}`,
      new SessionSigner('t'.repeat(32)).issue(),
    ]) {
      assert.equal(signer.verify(bad), false, bad);
    }
    assert.ok(new SessionSigner('s'.repeat(32)).verify(key), 'the same secret verifies');
  });

  it('refuses a secret under 16 bytes', () => {
    assert.throws(() => new SessionSigner('short'), /at least 16 bytes: got 5/);
  });
});

describe('withSessionCookie()', () => {
  it('replaces any pair of the session cookie and keeps the others in order', () => {
    assert.equal(withSessionCookie(undefined, 'app', 'K'), 'app=K');
    assert.equal(withSessionCookie('', 'app', 'K'), 'app=K');
    assert.equal(withSessionCookie('a=1; app=forged;b=2', 'app', 'K'), 'a=1; b=2; app=K');
    assert.equal(withSessionCookie('apple=1; app = x; app=y', 'app', 'K'), 'apple=1; app=K');
  });
});

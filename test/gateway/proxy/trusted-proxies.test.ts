import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forwardedHttps, TrustedProxies } from '../../../src/gateway/proxy/trusted-proxies.ts';

describe('TrustedProxies', () => {
  it('matches addresses and CIDRs of both families, IPv4-mapped peers included', () => {
    const t = new TrustedProxies(['10.0.0.0/8', '192.168.1.5', '::1', 'fd00::/8']);
    assert.ok(t.has('10.9.8.7'));
    assert.ok(t.has('::ffff:10.1.1.1'));
    assert.ok(t.has('192.168.1.5'));
    assert.ok(!t.has('192.168.1.6'));
    assert.ok(t.has('::1'));
    assert.ok(t.has('fd12::3'));
    assert.ok(!t.has('127.0.0.1'));
    assert.ok(!t.has(undefined));
    assert.ok(!t.has('not-an-ip'));
    assert.ok(new TrustedProxies().empty);
    assert.ok(!new TrustedProxies().has('127.0.0.1'));
  });

  it('refuses what is neither an address nor a CIDR, naming it', () => {
    for (const bad of ['localhost', '10.0.0.0/33', '::1/129', '10.0.0.0/8/1', '10.0.0.0/x']) {
      assert.throws(() => new TrustedProxies([bad]), new RegExp(`'${bad.replace(/[./]/g, '\\$&')}'`));
    }
  });

  it('forwardedHttps() believes the last X-Forwarded-Proto value of a trusted peer only', () => {
    const t = new TrustedProxies(['127.0.0.1']);
    assert.ok(forwardedHttps(t, '127.0.0.1', 'https'));
    assert.ok(forwardedHttps(t, '127.0.0.1', 'http, HTTPS '));
    assert.ok(!forwardedHttps(t, '127.0.0.1', 'https, http'));
    assert.ok(!forwardedHttps(t, '127.0.0.2', 'https'));
    assert.ok(!forwardedHttps(t, '127.0.0.1', undefined));
  });
});

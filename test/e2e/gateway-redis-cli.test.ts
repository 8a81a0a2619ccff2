/**
 * `tether gateway --session-store redis` flags refused before anything starts: exit non-zero with a message
 * naming the flag (and the Redis host and port), never the password. Whole process, as an operator sees it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serviceYaml, writeManifest } from '../gateway/helpers/harness.ts';
import { gatewayExit, LOOPBACK_PORTS } from './helpers/gateway-process.ts';

const PASSWORD = 'Sup3rSecretPw';

describe('tether gateway: bad session store flags', () => {
  it('a bad --redis-url (or TETHER_REDIS_URL) exits non-zero naming host and port, never the password', async (t) => {
    const file = await writeManifest(t, serviceYaml('svc', {}));
    const base = ['--services', file, ...LOOPBACK_PORTS];
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['--redis-url', `redis://ops:${PASSWORD}@cache.internal:70000/0`], {}, /--redis-url: .*cache\.internal.*70000/],
      [['--redis-url', `http://ops:${PASSWORD}@cache.internal:6379/0`], {}, /scheme .*host cache\.internal:6379/],
      [[], { TETHER_REDIS_URL: `redis://ops:${PASSWORD}@cache.internal:6379/x` }, /database of cache\.internal:6379/],
      [[], {}, /--session-store redis needs --redis-url/],
      [['--redis-url', 'redis://127.0.0.1:6379/0', '--redis-prefix', 'has space'], {}, /--redis-prefix: /],
    ];
    for (const [flags, env, message] of cases) {
      const r = await gatewayExit([...base, '--session-store', 'redis', ...flags], env);
      assert.notEqual(r.code, 0, r.out);
      assert.match(r.out, message);
      assert.ok(!r.out.includes(PASSWORD), `the password is never printed: ${r.out}`);
      assert.doesNotMatch(r.out, /gateway listening/);
    }
    const other = await gatewayExit([...base, '--session-store', 'etcd']);
    assert.notEqual(other.code, 0);
    assert.match(other.out, /--session-store: must be 'memory' or 'redis', got 'etcd'/);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRedisUrl } from '../../../src/sessions/redis/redis-url.ts';

const SECRET = 'hunter2-pw';

describe('parseRedisUrl()', () => {
  it('refuses a password with a raw / ? # or @, naming the host and no part of the password', () => {
    for (const password of ['123/456', '123?x', '123#x', 's3cr/et', 's3cr@et']) {
      assert.throws(
        () => parseRedisUrl(`redis://bob:${password}@cache:6380/0`),
        (err: Error) => {
          assert.match(err.message, /percent-encode .* \(host cache, port 6380\)/);
          assert.ok(!err.message.includes(password.slice(0, 3)), err.message);
          return true;
        },
      );
    }
    assert.equal(parseRedisUrl('redis://bob:s3cr%2Fet@cache:6380/0').port, 6380);
  });

  it('reads host, port, database, credentials and TLS; its display has no credentials', () => {
    const t = parseRedisUrl(`redis://bob:${SECRET}@10.0.0.5:6380/3`);
    assert.deepEqual(
      { host: t.host, port: t.port, db: t.db, tls: t.tls, user: t.username, pw: t.password },
      { host: '10.0.0.5', port: 6380, db: 3, tls: false, user: 'bob', pw: SECRET },
    );
    assert.equal(t.display, '10.0.0.5:6380/3');
    const d = parseRedisUrl('rediss://cache.internal');
    assert.deepEqual([d.host, d.port, d.db, d.tls, d.password], ['cache.internal', 6379, 0, true, undefined]);
    assert.equal(parseRedisUrl('redis://[::1]:7000/0').host, '::1');
  });

  for (const [what, url, names] of [
    ['a scheme that is not redis', `http://u:${SECRET}@cache:6379/0`, /scheme must be redis:\/\/ .*host cache:6379/],
    ['a port out of range', `redis://u:${SECRET}@cache:99999/0`, /--redis-url: .*(port|valid URL).*cache/],
    [
      'a database that is not a number',
      `redis://u:${SECRET}@cache:6379/zero`,
      /database of cache:6379 must be a number/,
    ],
    ['options in the URL', `redis://u:${SECRET}@cache:6379/0?tls=1`, /options .* not supported \(host cache:6379\)/],
    ['no host', 'redis://:6379/0', /--redis-url: /],
    ['not a URL at all', `redis://u:${SECRET}@cache:63 79/0`, /not a valid URL \(host cache, port 63 79\)/],
    [
      'a password with a stray %',
      `redis://u:${SECRET}%zz@cache:6379/0`,
      /--redis-url: the password of cache:6379 is not valid percent-encoding/,
    ],
    ['a user name with a stray %', `redis://u%zz:${SECRET}@cache:6380/0`, /the user name of cache:6380 is not valid/],
  ] as const) {
    it(`refuses ${what}, naming where and never the password`, () => {
      assert.throws(
        () => parseRedisUrl(url),
        (err: Error) => {
          assert.match(err.message, names);
          assert.ok(!err.message.includes(SECRET), err.message);
          return true;
        },
      );
    });
  }
});

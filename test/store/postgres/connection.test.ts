/**
 * `maskUrl` and `hostPort`: what the PostgreSQL store prints of `--postgres-url` never holds the
 * password, also when it holds characters a URL gives a meaning to ('/', '?', '#', '@'), which made
 * `new URL()` read part of it as a port or a path, or fail.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hostPort, maskUrl, poolConfig } from '../../../src/store/postgres/connection.ts';

const passwords = ['s3cr/et', 's3cr?et', 's3cr#et', 's3cr@et', '123/456', '123?x', '123#x', 'a:b/c?d#e@f', 'plain'];

describe('maskUrl', () => {
  for (const password of passwords) {
    it(`masks the password ${JSON.stringify(password)}`, () => {
      const url = `postgres://tether:${password}@127.0.0.1:5433/db`;
      const masked = maskUrl(url);
      assert.equal(masked, 'postgres://tether:***@127.0.0.1:5433/db');
      assert.ok(!masked.includes(password));
    });
  }

  it('leaves a URL without a password as it is, and masks a password= option', () => {
    assert.equal(maskUrl('postgres://127.0.0.1:5433/db'), 'postgres://127.0.0.1:5433/db');
    assert.equal(maskUrl('postgres://tether@127.0.0.1/db'), 'postgres://tether@127.0.0.1/db');
    assert.equal(
      maskUrl('postgres://127.0.0.1/db?sslmode=require&password=hunter2'),
      'postgres://127.0.0.1/db?sslmode=require&password=***',
    );
  });
});

describe('hostPort', () => {
  it('names host and port only, whatever the password holds', () => {
    for (const password of passwords) {
      assert.equal(hostPort(`postgres://tether:${password}@db.local:5433/x`), 'db.local:5433');
    }
    assert.equal(hostPort('postgres://db.local/x'), 'db.local:5432');
    assert.equal(hostPort('postgres://u:p@[::1]:6000/x'), '[::1]:6000');
  });
});

describe('poolConfig', () => {
  it('refuses a password with a raw / ? or #, naming neither it nor a part of it', () => {
    for (const password of ['123/456', '123?x', '123#x', 's3cr/et']) {
      assert.throws(
        () => poolConfig({ url: `postgres://tether:${password}@db.local:5433/x` }),
        (err: Error) => {
          assert.match(err.message, /percent-encode|not a URL/);
          assert.ok(!err.message.includes(password.slice(0, 3)), err.message);
          return true;
        },
      );
    }
    assert.equal(poolConfig({ url: 'postgres://tether:s3cr%2Fet@db.local:5433/x' }).max, 10);
  });
});

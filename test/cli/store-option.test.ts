/**
 * `--store`: SQLite is left to the server, PostgreSQL needs a URL and a sane pool size, and an unknown
 * store or a bad URL is refused with the flag named and the password masked.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openStoreOption } from '../../src/cli/store-option.ts';
import { silentLogger } from '../../src/common/log.ts';

const log = silentLogger();

describe('openStoreOption', () => {
  it('leaves SQLite to the server (it opens it in --data)', async () => {
    assert.equal(await openStoreOption({ store: 'sqlite', poolSize: '10' }, log), undefined);
  });

  it('refuses an unknown store, naming it', async () => {
    await assert.rejects(
      openStoreOption({ store: 'mysql', poolSize: '10' }, log),
      /--store must be sqlite or postgres: got mysql/,
    );
  });

  it('refuses --store postgres without a URL', async () => {
    await assert.rejects(openStoreOption({ store: 'postgres', poolSize: '10' }, log), /needs --postgres-url/);
  });

  it('refuses a pool size out of range', async () => {
    const flags = { store: 'postgres', postgresUrl: 'postgres://u:p@127.0.0.1:1/db' };
    await assert.rejects(
      openStoreOption({ ...flags, poolSize: '1' }, log),
      /--pool-size must be an integer 2\.\.1000: got 1/,
    );
    await assert.rejects(openStoreOption({ ...flags, poolSize: 'x' }, log), /--pool-size/);
  });

  it('refuses a URL that is not postgres://, with the password masked', async () => {
    await assert.rejects(
      openStoreOption({ store: 'postgres', postgresUrl: 'mysql://me:topsecret@h/db', poolSize: '10' }, log),
      (err: Error) => {
        assert.match(err.message, /must start with postgres:\/\//);
        assert.ok(!err.message.includes('topsecret'));
        return true;
      },
    );
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { credentialsEnd, rawCredentials } from '../../src/common/url-credentials.ts';
import { parseRedisUrl } from '../../src/sessions/redis/redis-url.ts';
import { hostPort, maskUrl, poolConfig } from '../../src/store/postgres/connection.ts';

describe('credentialsEnd / rawCredentials', () => {
  it('ends the credentials at the first @ when the host follows it, though an @ comes later (a query option)', () => {
    const url = 'postgres://u:secret@db.example:5432/app?application_name=svc@prod';
    assert.equal(credentialsEnd(url), url.indexOf('@'));
    assert.equal(rawCredentials(url), false);
  });

  it('ends them at the last @ when the password holds a raw character', () => {
    for (const url of ['postgres://u:s3cr/et@h:1/db', 'postgres://u:12?x@h/db', 'postgres://u:p@ss@h/db']) {
      assert.equal(credentialsEnd(url), url.lastIndexOf('@'), url);
      assert.equal(rawCredentials(url), true, url);
    }
    assert.equal(credentialsEnd('postgres://h:5432/db'), -1);
  });
});

describe('PostgreSQL and Redis URLs with an @ outside the credentials', () => {
  it('are accepted and masked at the right @', () => {
    const url = 'postgres://u:secret@db.example:5432/app?application_name=svc@prod';
    assert.equal(poolConfig({ url }).connectionString, url);
    assert.equal(maskUrl(url), 'postgres://u:***@db.example:5432/app?application_name=svc@prod');
    assert.equal(hostPort(url), 'db.example:5432');
    // Redis takes no options, and says so naming the real host (it named "b").
    assert.throws(
      () => parseRedisUrl('redis://:pw@h:6379/0?x=a@b'),
      /options in the URL are not supported \(host h:6379\)/,
    );
  });

  it('never name option text as the host (it may hold a password)', () => {
    const url = 'postgres://db/app?user=me@corp&password=hunter2';
    assert.doesNotMatch(hostPort(url), /hunter2/);
    assert.doesNotMatch(maskUrl(url), /hunter2/);
    assert.throws(
      () => poolConfig({ url }),
      (err: Error) => !err.message.includes('hunter2'),
    );
  });
});

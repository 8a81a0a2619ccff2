import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkSecret, loadOrCreateSecret } from '../../src/common/secret-file.ts';

describe('loadOrCreateSecret()', () => {
  it('generates 256 bits once (0600 file in a 0700 folder, whatever the umask), then reads the same', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'tether-secret-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'gateway', 'claim.secret');
    const old = process.umask(0o000);
    let first: ReturnType<typeof loadOrCreateSecret>;
    try {
      first = loadOrCreateSecret(file);
    } finally {
      process.umask(old);
    }
    assert.equal(first.created, true);
    assert.match(first.value, /^[0-9a-f]{64}$/);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'gateway')).mode & 0o777, 0o700);
    const again = loadOrCreateSecret(file);
    assert.deepEqual(again, { value: first.value, created: false });
  });

  it('tightens a readable existing file and refuses a short one without showing it', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'tether-secret-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const loose = join(dir, 'loose');
    writeFileSync(loose, `${'z'.repeat(40)}\n`);
    chmodSync(loose, 0o644);
    assert.equal(loadOrCreateSecret(loose).value, 'z'.repeat(40));
    assert.equal(statSync(loose).mode & 0o777, 0o600);
    const short = join(dir, 'short');
    writeFileSync(short, 'tiny-secret');
    assert.throws(
      () => loadOrCreateSecret(short),
      (err: Error) => err.message.includes(short) && !err.message.includes('tiny-secret'),
    );
    assert.equal(readFileSync(short, 'utf8'), 'tiny-secret', 'a refused file is left as it is');
  });

  it('checkSecret() names the source of a short secret', () => {
    assert.throws(() => checkSecret('abc', 'TETHER_CLAIM_SECRET'), /TETHER_CLAIM_SECRET must be at least 32/);
    assert.equal(checkSecret(` ${'a'.repeat(32)}\n`, 'x'), 'a'.repeat(32));
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseQuantity } from '../../src/common/quantities.ts';

describe('parseQuantity()', () => {
  it('reads binary and decimal suffixes, decimals and exponents into base units', () => {
    assert.equal(parseQuantity('256Mi'), 256 * 2 ** 20);
    assert.equal(parseQuantity('1.5Gi'), 1.5 * 2 ** 30);
    assert.equal(parseQuantity('128M'), 128e6);
    assert.equal(parseQuantity('500m'), 0.5);
    assert.equal(parseQuantity('2'), 2);
    assert.equal(parseQuantity('1e9'), 1e9);
    assert.equal(parseQuantity('.5'), 0.5);
  });

  it('refuses what is not a quantity, showing the text', () => {
    for (const bad of ['', 'lots', '-1Gi', '12MB', '1.2.3', 'Mi']) {
      assert.throws(() => parseQuantity(bad), new RegExp(`not a Kubernetes quantity.*${JSON.stringify(bad)}`));
    }
  });
});

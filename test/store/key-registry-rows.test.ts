/**
 * The key and registry row codecs both drivers share (src/store/key-registry-rows.ts): `keyValues`
 * gives a key's values in `KEY_COLUMNS` order (both drivers insert with the pair), and rows map back.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  KEY_COLUMNS,
  type KeyRow,
  keyFromRow,
  keyValues,
  registryVersionFromRow,
} from '../../src/store/key-registry-rows.ts';
import { freshTenant, makeKey } from './conformance/helpers.ts';

describe('key-registry-rows', () => {
  it('gives a key values in KEY_COLUMNS order, read back into the same record', () => {
    for (const key of [makeKey(freshTenant()), makeKey(freshTenant(), { agent: null, admin: true, expiresAt: null })]) {
      const columns = KEY_COLUMNS.split(', ');
      const values = keyValues(key);
      assert.equal(values.length, columns.length);
      const row = Object.fromEntries(columns.map((c, i) => [c, values[i]])) as unknown as KeyRow;
      assert.equal(row.admin, key.admin ? 1 : 0);
      assert.deepEqual(keyFromRow(row), key);
    }
  });

  it('reads a registry version with its predicates parsed', () => {
    const predicates = [{ name: 'lives_in', cardinality: 'single', valueType: 'string' }];
    const row = { id: 'reg_1', tenant: 't', recorded_at: 42, predicates: JSON.stringify(predicates) };
    assert.deepEqual(registryVersionFromRow(row), { id: 'reg_1', tenant: 't', recordedAt: 42, predicates });
  });
});

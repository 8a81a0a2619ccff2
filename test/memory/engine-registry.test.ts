/**
 * Registry changes as the engine sees them (SQLite `:memory:`, `ManualClock`, `personal` registry):
 * a cardinality switch from when it is recorded, refused type changes, and the seeded default.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { starterRegistry } from '../../src/memory/registry.ts';
import { MINUTE, refused, setup } from './helpers.ts';

describe('RegistryBook changes seen by the engine', () => {
  it('applies a switch from multi to single from the moment it is recorded', async (t) => {
    const { remember, values, registries, clock } = setup(t);
    await remember({ subject: 'alice', predicate: 'allergy', value: 'nuts' });
    clock.advance(MINUTE);
    await remember({ subject: 'alice', predicate: 'allergy', value: 'milk' });
    clock.advance(MINUTE);
    const before = clock.now() - 1;
    const single = starterRegistry('personal').map((d) =>
      d.name === 'allergy' ? { ...d, cardinality: 'single' as const } : d,
    );
    const version = await registries.replace('acme', single);
    assert.equal(version.recordedAt, clock.now());

    assert.deepEqual(await values('alice', 'allergy', before), ['nuts', 'milk'], 'as of before: the old rule');
    assert.deepEqual(await values('alice', 'allergy'), ['milk'], 'now: the new rule');
    assert.deepEqual(await values('alice', 'allergy', version.recordedAt), ['milk']);

    clock.advance(MINUTE);
    const r = await remember({ subject: 'alice', predicate: 'allergy', value: 'eggs' });
    assert.deepEqual(r.superseded, ['milk']);
    assert.deepEqual(await values('alice', 'allergy'), ['eggs']);
    assert.deepEqual(await values('alice', 'allergy', before), ['nuts', 'milk']);
  });

  it('refuses a change of value type and keeps the registry as it was', async (t) => {
    const { registries, remember, store } = setup(t);
    await remember({ subject: 'alice', predicate: 'birthday', value: '1990-05-17' });
    const changed = starterRegistry('personal').map((d) =>
      d.name === 'birthday' ? { ...d, valueType: 'string' as const } : d,
    );
    const index = changed.findIndex((d) => d.name === 'birthday');
    await refused(registries.replace('acme', changed), `predicates[${index}].value_type`, /cannot change/);
    assert.equal((await registries.current('acme')).find('birthday')?.valueType, 'date');
    assert.equal((await store.registryVersions('acme')).length, 1);
    await refused(remember({ subject: 'bob', predicate: 'birthday', value: 'in spring' }), 'value');
  });

  it('seeds a new tenant with the default registry in force from time 0, stored by its first write', async (t) => {
    const { registries, store } = setup(t);
    const current = await registries.current('acme');
    assert.deepEqual(
      current.predicates.map((p) => p.name),
      [...starterRegistry('personal').map((p) => p.name), 'note'],
    );
    assert.deepEqual(await store.registryVersions('acme'), []);
    await registries.currentForWrite('acme');
    const versions = await store.registryVersions('acme');
    assert.equal(versions.length, 1);
    assert.equal(versions[0]?.recordedAt, 0);
  });
});

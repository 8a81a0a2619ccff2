/**
 * Unit tests of the pure registry logic: lookup by name and alias, close-name suggestions,
 * validation errors naming the field, the fixed value type, and which version applies when.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isTetherError } from '../../src/common/errors.ts';
import {
  checkRegistryChange,
  closeNames,
  NOTE_PREDICATE,
  normalizePredicateName,
  Registry,
  starterRegistry,
  validatePredicates,
  versionAt,
} from '../../src/memory/registry.ts';
import { STARTER_REGISTRIES } from '../../src/memory/starter-registries.ts';
import type { PredicateDef, RegistryVersion } from '../../src/store/registry-store.ts';

/** Asserts `fn` throws 400 `invalid_request` naming `field`. */
function throwsField(fn: () => unknown, field: string, message?: RegExp): void {
  assert.throws(fn, (err) => {
    assert.ok(isTetherError(err), `a TetherError, got ${String(err)}`);
    assert.equal(err.code, 'invalid_request');
    assert.equal(err.field, field);
    if (message) assert.match(err.message, message);
    return true;
  });
}

const def = (name: string, extra: Partial<PredicateDef> = {}): PredicateDef => ({
  name,
  cardinality: 'single',
  valueType: 'string',
  ...extra,
});

describe('Registry', () => {
  const registry = new Registry(starterRegistry('personal'));

  it('always holds note, multi and string', () => {
    assert.deepEqual(registry.find('note'), NOTE_PREDICATE);
    assert.equal(new Registry([]).find('note')?.cardinality, 'multi');
    const own = def('note', { cardinality: 'multi', description: 'ours' });
    assert.equal(new Registry([own]).find('note'), own);
  });

  it('finds a predicate by name, alias, or as a client types it', () => {
    assert.equal(registry.find('lives_in')?.name, 'lives_in');
    assert.equal(registry.find('city')?.name, 'lives_in');
    assert.equal(registry.find(' Favourite Color ')?.name, 'favorite_color');
    assert.equal(registry.find('favorite-color')?.name, 'favorite_color');
    assert.equal(registry.find('colour'), undefined);
  });

  it('refuses an unknown predicate naming the field, with close names', () => {
    throwsField(
      () => registry.resolve('favorite_colour', 'statements[3].predicate'),
      'statements[3].predicate',
      /did you mean 'favorite_color', 'favourite_color'\?/,
    );
    throwsField(
      () => registry.resolve('qqqqqqqqqqqqqqqq', 'predicate'),
      'predicate',
      /unknown predicate 'qqqqqqqqqqqqqqqq' \(or use 'note'\)/,
    );
  });
});

describe('normalizePredicateName', () => {
  it('lower-cases and snake-cases', () => {
    assert.equal(normalizePredicateName('  Favorite Color '), 'favorite_color');
    assert.equal(normalizePredicateName('Lives-In'), 'lives_in');
    assert.equal(normalizePredicateName('a  -  b'), 'a_b');
  });
});

describe('closeNames', () => {
  const names = ['favorite_color', 'favourite_color', 'lives_in', 'name', 'knows', 'note', 'timezone'];

  it('gives close names, closest first', () => {
    assert.deepEqual(closeNames('favorite_colour', names), ['favorite_color', 'favourite_color']);
    assert.deepEqual(closeNames('nme', names), ['name', 'note']);
  });

  it('counts a shared prefix as close', () => {
    assert.deepEqual(closeNames('lives', names), ['lives_in']);
    assert.deepEqual(closeNames('timezone_name', names), ['timezone']);
  });

  it('gives at most three, ties in alphabetical order', () => {
    assert.deepEqual(closeNames('abc', ['abd', 'abe', 'abf', 'abg']), ['abd', 'abe', 'abf']);
  });

  it('gives nothing when no name is close', () => {
    assert.deepEqual(closeNames('employer', names), []);
    assert.deepEqual(closeNames('x', []), []);
  });
});

describe('validatePredicates', () => {
  it('accepts every starter registry', () => {
    for (const name of Object.keys(STARTER_REGISTRIES)) validatePredicates(starterRegistry(name));
  });

  const cases: [what: string, predicates: PredicateDef[], field: string][] = [
    ['a name that is not snake_case', [def('ok'), def('Bad-Name')], 'predicates[1].name'],
    ['a name starting with a digit', [def('1st')], 'predicates[0].name'],
    ['a name longer than 64', [def(`a${'b'.repeat(64)}`)], 'predicates[0].name'],
    [
      'an unknown value type',
      [def('a'), def('b', { valueType: 'text' as PredicateDef['valueType'] })],
      'predicates[1].value_type',
    ],
    ['an enum without allowed values', [def('mood', { valueType: 'enum' })], 'predicates[0].allowed'],
    ['an enum with an empty allowed list', [def('mood', { valueType: 'enum', allowed: [] })], 'predicates[0].allowed'],
    ['allowed values on a string', [def('a'), def('b'), def('c', { allowed: ['x'] })], 'predicates[2].allowed'],
    ['a bad alias', [def('a', { aliases: ['fine', 'Not Fine'] })], 'predicates[0].aliases[1]'],
    ['a repeated name', [def('a'), def('a')], 'predicates[1].name'],
    ['an alias taken by another name', [def('a'), def('b', { aliases: ['a'] })], 'predicates[1].aliases[0]'],
    ['a name taken by another alias', [def('a', { aliases: ['b'] }), def('b')], 'predicates[1].name'],
    ['note redefined as single', [def('note')], 'predicates[0]'],
    [
      'note redefined as a number',
      [def('x'), def('note', { cardinality: 'multi', valueType: 'number' })],
      'predicates[1]',
    ],
  ];
  for (const [what, predicates, field] of cases) {
    it(`refuses ${what}, naming ${field}`, () => throwsField(() => validatePredicates(predicates), field));
  }

  // Regression (was a bug): an alias `note` is accepted, yet `Registry` maps `note` to the built-in
  // predicate, so the alias silently never applies.
  it('refuses an alias that shadows the built-in note', () => {
    throwsField(
      () => validatePredicates([def('comment', { cardinality: 'multi', aliases: ['note'] })]),
      'predicates[0].aliases[0]',
    );
  });
});

describe('checkRegistryChange', () => {
  const before = [def('name'), def('birthday', { valueType: 'date' }), def('allergy', { cardinality: 'multi' })];

  it('accepts a changed cardinality, new and removed predicates', () => {
    checkRegistryChange(before, [
      def('name', { cardinality: 'multi' }),
      def('allergy'),
      def('mood', { valueType: 'enum', allowed: ['ok'] }),
    ]);
  });

  it('refuses a changed value type, naming the field and both types', () => {
    throwsField(
      () => checkRegistryChange(before, [def('name'), def('birthday')]),
      'predicates[1].value_type',
      /'birthday' cannot change \(was date, got string\)/,
    );
  });

  it('refuses an alias that takes the name of an earlier predicate (a rename), naming the alias', () => {
    throwsField(
      () =>
        checkRegistryChange(before, [
          def('full_name', { aliases: ['nickname', 'name'] }),
          def('birthday', { valueType: 'date' }),
        ]),
      'predicates[0].aliases[1]',
      /'name' is a predicate of an earlier version.*cannot become an alias of 'full_name'/,
    );
    // A name no version defined is a fine alias, and so is a predicate's own name.
    checkRegistryChange(before, [def('name', { aliases: ['name', 'called'] }), def('birthday', { valueType: 'date' })]);
  });
});

describe('versionAt', () => {
  const v = (recordedAt: number): RegistryVersion => ({
    id: `v${recordedAt}`,
    tenant: 'acme',
    recordedAt,
    predicates: [],
  });
  const versions = [v(0), v(100), v(200)];

  it('gives the newest version recorded at or before the time', () => {
    assert.equal(versionAt(versions, 0)?.id, 'v0');
    assert.equal(versionAt(versions, 99)?.id, 'v0');
    assert.equal(versionAt(versions, 100)?.id, 'v100');
    assert.equal(versionAt(versions, 150)?.id, 'v100');
    assert.equal(versionAt(versions, 1e15)?.id, 'v200');
  });

  it('gives the first version for a time before all, and nothing for no versions', () => {
    assert.equal(versionAt(versions, -5)?.id, 'v0');
    assert.equal(versionAt([], 5), undefined);
  });
});

describe('starterRegistry', () => {
  it('gives a fresh copy each time', () => {
    const a = starterRegistry('coding');
    (a[0] as PredicateDef).cardinality = 'single';
    assert.equal(starterRegistry('coding')[0]?.cardinality, 'multi');
  });

  it('refuses an unknown name, listing the known ones', () => {
    assert.throws(
      () => starterRegistry('medical'),
      /unknown registry 'medical': choose one of coding, support, sales, voice, personal/,
    );
  });
});

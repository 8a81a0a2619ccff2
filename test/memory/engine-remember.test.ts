/**
 * The memory engine's `remember` end to end (SQLite `:memory:`, `ManualClock`, `personal` registry):
 * new facts, restatements, superseding, batches, validation refusals, aliases and actors.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WriteContext } from '../../src/memory/engine.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import type { PredicateDef } from '../../src/store/registry-store.ts';
import { ACTOR, MINUTE, NAMESPACE, refused, setup, T0 } from './helpers.ts';

describe('MemoryEngine.remember', () => {
  it('stores a new fact with a normalised subject and the canonical predicate', async (t) => {
    const { remember, store } = setup(t);
    const r = await remember({ subject: '  Alice   Smith ', predicate: 'Favorite Color', value: ' Blue ' });
    assert.equal(r.stored, true);
    assert.equal(r.alreadyKnown, false);
    assert.deepEqual(r.superseded, []);
    assert.ok(r.event);
    assert.equal(r.event.subject, 'alice smith');
    assert.equal(r.event.predicate, 'favorite_color');
    assert.equal(r.event.value, 'Blue');
    assert.equal(r.event.observedAt, T0);
    assert.equal(r.event.recordedAt, T0);
    assert.equal(await store.countEvents(), 1);
  });

  it('reports already_known for a restated value, in any case, and writes nothing', async (t) => {
    const { remember, store, clock } = setup(t);
    await remember({ subject: 'alice', predicate: 'favorite_color', value: 'Blue' });
    clock.advance(MINUTE);
    const again = await remember({ subject: 'ALICE', predicate: 'favorite_color', value: 'bLUE' });
    assert.deepEqual(again, { stored: false, alreadyKnown: true, superseded: [], event: null });
    await remember({ subject: 'alice', predicate: 'allergy', value: 'Peanuts' });
    const multi = await remember({ subject: 'alice', predicate: 'allergy', value: 'peanuts' });
    assert.equal(multi.alreadyKnown, true);
    assert.equal(await store.countEvents(), 2);
  });

  it('reports what a new value of a single predicate superseded', async (t) => {
    const { remember, clock, values } = setup(t);
    assert.deepEqual((await remember({ subject: 'alice', predicate: 'lives_in', value: 'Paris' })).superseded, []);
    clock.advance(MINUTE);
    const r = await remember({ subject: 'alice', predicate: 'lives_in', value: 'Rome' });
    assert.equal(r.stored, true);
    assert.deepEqual(r.superseded, ['Paris']);
    clock.advance(MINUTE);
    assert.deepEqual((await remember({ subject: 'alice', predicate: 'lives_in', value: 'Oslo' })).superseded, ['Rome']);
    assert.deepEqual(await values('alice', 'lives_in'), ['Oslo']);
  });

  it('accumulates the values of a multi predicate without superseding', async (t) => {
    const { remember, values } = setup(t);
    await remember({ subject: 'alice', predicate: 'allergy', value: 'nuts' });
    const r = await remember({ subject: 'alice', predicate: 'allergy', value: 'milk' });
    assert.equal(r.stored, true);
    assert.deepEqual(r.superseded, []);
    assert.deepEqual(await values('alice', 'allergy'), ['nuts', 'milk']);
  });

  it('folds statements of one batch in order: a restatement is known, a second value supersedes', async (t) => {
    const { engine, ctx, store } = setup(t);
    const results = await engine.remember(
      ctx,
      [
        { subject: 'bob', predicate: 'allergy', value: 'soy' },
        { subject: 'bob', predicate: 'allergy', value: 'SOY' },
        { subject: 'bob', predicate: 'lives_in', value: 'Lyon' },
        { subject: 'bob', predicate: 'lives_in', value: 'Nice' },
      ],
      'statements',
    );
    assert.deepEqual(
      results.map((r) => [r.stored, r.alreadyKnown, r.superseded]),
      [
        [true, false, []],
        [false, true, []],
        [true, false, []],
        [true, false, ['Lyon']],
      ],
    );
    assert.equal(await store.countEvents(), 3);
  });

  it('validates a batch whole before any write: a bad 3rd statement names statements[2].value', async (t) => {
    const { engine, ctx, store } = setup(t);
    await refused(
      engine.remember(
        ctx,
        [
          { subject: 'alice', predicate: 'name', value: 'Alice' },
          { subject: 'alice', predicate: 'allergy', value: 'nuts' },
          { subject: 'alice', predicate: 'birthday', value: 'next tuesday' },
          { subject: 'alice', predicate: 'lives_in', value: 'Paris' },
        ],
        'statements',
      ),
      'statements[2].value',
      /birthday/,
    );
    assert.equal(await store.countEvents(), 0);
    assert.deepEqual(await store.exportEvents({ limit: 10 }), []);
  });

  it('refuses an unknown predicate and lists close names', async (t) => {
    const { remember, engine, ctx, store } = setup(t);
    const err = await refused(
      remember({ subject: 'alice', predicate: 'favorite_colour', value: 'blue' }),
      'predicate',
      /unknown predicate 'favorite_colour'/,
    );
    assert.match(err.message, /'favorite_color'/);
    assert.match(err.message, /'note'/);
    await refused(
      engine.remember(
        ctx,
        [
          { subject: 'alice', predicate: 'name', value: 'Alice' },
          { subject: 'alice', predicate: 'lives', value: 'Paris' },
        ],
        'statements',
      ),
      'statements[1].predicate',
      /'lives_in'/,
    );
    assert.equal(await store.countEvents(), 0);
  });

  it('refuses a value of the wrong type, naming the predicate', async (t) => {
    const { remember } = setup(t);
    await refused(
      remember({ subject: 'alice', predicate: 'lives_in', value: 42 }),
      'value',
      /'lives_in' takes a string/,
    );
    await refused(remember({ subject: 'alice', predicate: 'birthday', value: true }), 'value', /'birthday'/);
    await refused(remember({ subject: 'alice', predicate: 'knows', value: '   ' }), 'value', /must not be empty/);
  });

  it('refuses an enum value that is not allowed and stores the allowed spelling', async (t) => {
    const { remember, registries } = setup(t);
    const mood: PredicateDef = {
      name: 'mood',
      cardinality: 'single',
      valueType: 'enum',
      allowed: ['happy', 'sad'],
    };
    await registries.replace('acme', [...starterRegistry('personal'), mood]);
    await refused(remember({ subject: 'alice', predicate: 'mood', value: 'ecstatic' }), 'value', /allowed: happy, sad/);
    const r = await remember({ subject: 'alice', predicate: 'mood', value: 'HAPPY' });
    assert.equal(r.event?.value, 'happy');
  });

  it('refuses observed_at more than 60 s in the future, and takes back-dated and 60 s ahead', async (t) => {
    const { remember, store } = setup(t);
    await refused(
      remember({ subject: 'alice', predicate: 'allergy', value: 'nuts', observedAt: T0 + 60_001 }),
      'observed_at',
      /60 s in the future/,
    );
    const ahead = await remember({ subject: 'alice', predicate: 'allergy', value: 'milk', observedAt: T0 + 60_000 });
    assert.equal(ahead.event?.observedAt, T0 + 60_000);
    const past = await remember({ subject: 'alice', predicate: 'allergy', value: 'eggs', observedAt: T0 - 86_400_000 });
    assert.equal(past.event?.observedAt, T0 - 86_400_000);
    assert.equal(past.event?.recordedAt, T0);
    assert.equal(await store.countEvents(), 2);
  });

  it('refuses evidence longer than 8192 characters', async (t) => {
    const { remember } = setup(t);
    await refused(
      remember({ subject: 'alice', predicate: 'allergy', value: 'nuts', evidence: 'x'.repeat(8193) }),
      'evidence',
    );
  });

  it('resolves aliases to the canonical predicate', async (t) => {
    const { remember, values } = setup(t);
    const colour = await remember({ subject: 'alice', predicate: 'favourite_color', value: 'blue' });
    assert.equal(colour.event?.predicate, 'favorite_color');
    const city = await remember({ subject: 'alice', predicate: 'City', value: 'Paris' });
    assert.equal(city.event?.predicate, 'lives_in');
    const again = await remember({ subject: 'alice', predicate: 'favorite_color', value: 'Blue' });
    assert.equal(again.alreadyKnown, true);
    assert.deepEqual(await values('alice', 'favourite_color'), ['blue']);
    assert.deepEqual(await values('alice', 'city'), ['Paris']);
  });

  it('records the actor given on every event, including retractions', async (t) => {
    const { remember, engine, ctx, reader, clock } = setup(t);
    await remember({ subject: 'alice', predicate: 'lives_in', value: 'Paris' });
    clock.advance(MINUTE);
    await remember({ subject: 'alice', predicate: 'lives_in', value: 'Rome' });
    clock.advance(MINUTE);
    await engine.forget(ctx, { subject: 'alice', predicate: 'lives_in' });
    const other: WriteContext = {
      namespace: NAMESPACE,
      actor: { ...ACTOR, session: 'pod-8', keyId: 'ffeeddccbbaa9988' },
    };
    clock.advance(MINUTE);
    await engine.remember(other, [{ subject: 'alice', predicate: 'lives_in', value: 'Oslo' }]);
    const { events: history } = await reader.history(NAMESPACE, { subject: 'alice', predicate: 'lives_in' });
    assert.deepEqual(
      history.map((e) => [e.retraction, e.actor]),
      [
        [false, ACTOR],
        [false, ACTOR],
        [true, ACTOR],
        [false, other.actor],
      ],
    );
  });
});

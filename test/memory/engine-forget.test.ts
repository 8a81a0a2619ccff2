/**
 * The memory engine's `forget` end to end (SQLite `:memory:`, `ManualClock`, `personal` registry):
 * withdrawing one or every value, nothing held, no resurrection, and refusals.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MINUTE, refused, setup, T0 } from './helpers.ts';

describe('MemoryEngine.forget', () => {
  it('withdraws one value of a multi predicate and keeps the others', async (t) => {
    const { remember, engine, ctx, values, clock } = setup(t);
    await remember({ subject: 'alice', predicate: 'allergy', value: 'nuts' });
    await remember({ subject: 'alice', predicate: 'allergy', value: 'milk' });
    clock.advance(MINUTE);
    const r = await engine.forget(ctx, { subject: 'Alice', predicate: 'allergy', value: 'NUTS' });
    assert.equal(r.withdrawn, 1);
    assert.equal(r.event?.retraction, true);
    assert.equal(r.event?.valueKey, 'nuts');
    assert.deepEqual(await values('alice', 'allergy'), ['milk']);
  });

  it('withdraws every value when no value is named', async (t) => {
    const { remember, engine, ctx, values, store } = setup(t);
    await remember({ subject: 'alice', predicate: 'allergy', value: 'nuts' });
    await remember({ subject: 'alice', predicate: 'allergy', value: 'milk' });
    const r = await engine.forget(ctx, { subject: 'alice', predicate: 'allergy' });
    assert.equal(r.withdrawn, 2);
    assert.equal(r.event?.value, null);
    assert.equal(r.event?.valueKey, null);
    assert.deepEqual(await values('alice', 'allergy'), []);
    assert.equal(await store.countEvents(), 3, 'one blanket retraction');
  });

  it('writes nothing when nothing is held', async (t) => {
    const { remember, engine, ctx, store, clock } = setup(t);
    assert.deepEqual(await engine.forget(ctx, { subject: 'nobody', predicate: 'allergy' }), {
      withdrawn: 0,
      event: null,
    });
    await remember({ subject: 'alice', predicate: 'lives_in', value: 'Paris' });
    clock.advance(MINUTE);
    await remember({ subject: 'alice', predicate: 'lives_in', value: 'Rome' });
    const before = await store.countEvents();
    // Paris is superseded, not held.
    assert.deepEqual(await engine.forget(ctx, { subject: 'alice', predicate: 'lives_in', value: 'Paris' }), {
      withdrawn: 0,
      event: null,
    });
    await engine.forget(ctx, { subject: 'alice', predicate: 'lives_in' });
    assert.deepEqual(await engine.forget(ctx, { subject: 'alice', predicate: 'lives_in' }), {
      withdrawn: 0,
      event: null,
    });
    assert.equal(await store.countEvents(), before + 1);
  });

  it('never brings an older value of a single predicate back', async (t) => {
    const { remember, engine, ctx, values, clock } = setup(t);
    await remember({ subject: 'alice', predicate: 'lives_in', value: 'Paris' });
    clock.advance(MINUTE);
    await remember({ subject: 'alice', predicate: 'lives_in', value: 'Rome' });
    clock.advance(MINUTE);
    assert.equal((await engine.forget(ctx, { subject: 'alice', predicate: 'lives_in', value: 'rome' })).withdrawn, 1);
    assert.deepEqual(await values('alice', 'lives_in'), []);
  });

  it('withdraws a value observed slightly in the future', async (t) => {
    const { remember, engine, ctx, values } = setup(t);
    await remember({ subject: 'alice', predicate: 'lives_in', value: 'Paris', observedAt: T0 + 30_000 });
    assert.equal((await engine.forget(ctx, { subject: 'alice', predicate: 'lives_in' })).withdrawn, 1);
    assert.deepEqual(await values('alice', 'lives_in'), []);
    assert.deepEqual(await values('alice', 'lives_in', T0 + 30_000), []);
  });

  it('refuses an unknown predicate or a value of the wrong type', async (t) => {
    const { engine, ctx } = setup(t);
    await refused(engine.forget(ctx, { subject: 'alice', predicate: 'colour' }), 'predicate');
    await refused(engine.forget(ctx, { subject: 'alice', predicate: 'birthday', value: 12 }), 'value');
  });
});

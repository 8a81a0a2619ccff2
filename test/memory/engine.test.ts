/**
 * The memory engine end to end over a real SQLite `:memory:` store, a `ManualClock` and the `personal`
 * starter registry: remember, forget, recall (exact, search, as_of), history and registry changes.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { ManualClock } from '../../src/common/clock.ts';
import { isTetherError, type TetherError } from '../../src/common/errors.ts';
import { MemoryEngine, type Statement, type WriteContext } from '../../src/memory/engine.ts';
import { MemoryReader, searchTerms } from '../../src/memory/recall.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { RegistryBook } from '../../src/memory/registry-book.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Actor, PredicateDef } from '../../src/store/store.ts';

const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;
const NAMESPACE = 'acme:run-1';
const ACTOR: Actor = { tenant: 'acme', agent: 'run-1', session: 'sandbox-pod-7', keyId: '00112233aabbccdd' };

/** A fresh engine on a fresh in-memory store; closed after the test. */
function setup(t: TestContext) {
  const store = openSqliteStore({ dataDir: ':memory:' });
  t.after(() => store.close());
  const clock = new ManualClock(T0);
  const registries = new RegistryBook(store, clock, starterRegistry('personal'));
  const engine = new MemoryEngine({ store, registries, clock });
  const reader = new MemoryReader({ store, registries, clock });
  const ctx: WriteContext = { namespace: NAMESPACE, actor: ACTOR };
  const remember = (s: Statement) => engine.remember(ctx, [s]).then((r) => r[0]!);
  const values = async (subject: string, predicate: string, asOf?: number) =>
    (await reader.recall({ namespace: NAMESPACE, subject, predicate, asOf, limit: 100 })).map((b) => b.event.value);
  const search = async (q: string, asOf?: number) =>
    (await reader.recall({ namespace: NAMESPACE, q, asOf, limit: 100 })).map((b) => b.event.value);
  return { store, clock, registries, engine, reader, ctx, remember, values, search };
}

/** Asserts `promise` rejects with 400 `invalid_request` naming `field`; returns the error. */
async function refused(promise: Promise<unknown>, field: string, message?: RegExp): Promise<TetherError> {
  let caught: unknown;
  await assert.rejects(promise, (err) => {
    caught = err;
    return true;
  });
  assert.ok(isTetherError(caught), `a TetherError, got ${String(caught)}`);
  const err = caught as TetherError;
  assert.equal(err.code, 'invalid_request');
  assert.equal(err.status, 400);
  assert.equal(err.field, field);
  if (message) assert.match(err.message, message);
  return err;
}

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
    const history = await reader.history(NAMESPACE, 'alice', 'lives_in');
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

describe('MemoryReader.recall', () => {
  it('never returns a superseded value from a search', async (t) => {
    const { remember, search, clock } = setup(t);
    await remember({ subject: 'alice', predicate: 'favorite_color', value: 'sky blue' });
    clock.advance(MINUTE);
    await remember({ subject: 'alice', predicate: 'favorite_color', value: 'crimson red' });
    assert.deepEqual(await search('blue'), []);
    assert.deepEqual(await search('red'), ['crimson red']);
    assert.deepEqual(await search('alice color'), ['crimson red']);
  });

  it('never returns a retracted value from a search', async (t) => {
    const { remember, search, engine, ctx, clock } = setup(t);
    await remember({ subject: 'alice', predicate: 'allergy', value: 'peanuts', evidence: 'told the nurse' });
    await remember({ subject: 'alice', predicate: 'allergy', value: 'shellfish' });
    clock.advance(MINUTE);
    await engine.forget(ctx, { subject: 'alice', predicate: 'allergy', value: 'peanuts' });
    assert.deepEqual(await search('peanuts'), []);
    assert.deepEqual(await search('nurse'), []);
    assert.deepEqual(await search('alice allergy'), ['shellfish']);
  });

  // Regression (was a bug): recall keeps a belief only if its own event is among the first
  // max(200, limit * 20) hits, so a fact with a long history of superseded values hides its current value.
  it('finds the current value of a fact with a long history of superseded values', async (t) => {
    const { remember, reader, clock } = setup(t);
    await remember({ subject: 'alice', predicate: 'name', value: 'Alice' });
    for (let i = 0; i < 300; i++) {
      clock.advance(MINUTE);
      await remember({ subject: 'alice', predicate: 'lives_in', value: `city${i}` });
    }
    const found = await reader.recall({ namespace: NAMESPACE, q: 'alice', limit: 10 });
    assert.deepEqual(found.map((b) => b.event.value).sort(), ['Alice', 'city299']);
  });

  it('searches as of a time, with what was held then', async (t) => {
    const { remember, search, clock } = setup(t);
    await remember({ subject: 'alice', predicate: 'favorite_color', value: 'sky blue' });
    clock.advance(MINUTE);
    await remember({ subject: 'alice', predicate: 'favorite_color', value: 'crimson red' });
    assert.deepEqual(await search('blue', T0), ['sky blue']);
    assert.deepEqual(await search('red', T0), []);
    assert.deepEqual(await search('blue', T0 - 1), []);
  });

  it('reads as of a time before, at and after each event', async (t) => {
    const { remember, values, clock, engine, ctx } = setup(t);
    await remember({ subject: 'alice', predicate: 'lives_in', value: 'Paris' });
    clock.advance(MINUTE);
    await remember({ subject: 'alice', predicate: 'lives_in', value: 'Rome' });
    clock.advance(MINUTE);
    await engine.forget(ctx, { subject: 'alice', predicate: 'lives_in' });
    assert.deepEqual(await values('alice', 'lives_in', T0 - 1), []);
    assert.deepEqual(await values('alice', 'lives_in', T0), ['Paris']);
    assert.deepEqual(await values('alice', 'lives_in', T0 + MINUTE - 1), ['Paris']);
    assert.deepEqual(await values('alice', 'lives_in', T0 + MINUTE), ['Rome']);
    assert.deepEqual(await values('alice', 'lives_in', T0 + 2 * MINUTE - 1), ['Rome']);
    assert.deepEqual(await values('alice', 'lives_in', T0 + 2 * MINUTE), []);
    assert.deepEqual(await values('alice', 'lives_in'), []);
  });

  it('keeps namespaces apart', async (t) => {
    const { remember, engine, reader } = setup(t);
    await remember({ subject: 'alice', predicate: 'lives_in', value: 'Paris' });
    await engine.remember({ namespace: 'acme:run-2', actor: { ...ACTOR, agent: 'run-2' } }, [
      { subject: 'alice', predicate: 'lives_in', value: 'Tokyo' },
    ]);
    const recall = (namespace: string, q?: string) =>
      reader.recall({ namespace, q, subject: 'alice', limit: 10 }).then((bs) => bs.map((b) => b.event.value));
    assert.deepEqual(await recall(NAMESPACE), ['Paris']);
    assert.deepEqual(await recall('acme:run-2'), ['Tokyo']);
    assert.deepEqual(await recall(NAMESPACE, 'tokyo'), []);
  });

  it('gives history oldest first in fold order, retractions included', async (t) => {
    const { remember, reader, engine, ctx, clock } = setup(t);
    clock.advance(MINUTE);
    await remember({ subject: 'alice', predicate: 'lives_in', value: 'Rome' });
    await remember({ subject: 'alice', predicate: 'lives_in', value: 'Paris', observedAt: T0 });
    clock.advance(MINUTE);
    await engine.forget(ctx, { subject: 'alice', predicate: 'lives_in' });
    const history = await reader.history(NAMESPACE, 'Alice', 'city');
    assert.deepEqual(
      history.map((e) => [e.value, e.retraction, e.observedAt]),
      [
        ['Paris', false, T0],
        ['Rome', false, T0 + MINUTE],
        [null, true, T0 + 2 * MINUTE],
      ],
    );
  });
});

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

  it('seeds a new tenant with the default registry in force from time 0', async (t) => {
    const { registries, store } = setup(t);
    const current = await registries.current('acme');
    assert.deepEqual(
      current.predicates.map((p) => p.name),
      [...starterRegistry('personal').map((p) => p.name), 'note'],
    );
    const versions = await store.registryVersions('acme');
    assert.equal(versions.length, 1);
    assert.equal(versions[0]?.recordedAt, 0);
  });
});

describe('searchTerms', () => {
  it('splits into lower-case words, drops repeats, and keeps at most 16', () => {
    assert.deepEqual(searchTerms('Alice’s favourite-COLOR, alice!'), ['alice', 's', 'favourite', 'color']);
    assert.deepEqual(searchTerms('Zoë 42'), ['zoe', '42'], 'diacritics folded as the FTS index does');
    const many = Array.from({ length: 20 }, (_, i) => `w${i}`).join(' ');
    assert.equal(searchTerms(many).length, 16);
  });

  it('refuses text without a word, or longer than 512 characters', async () => {
    await refused(
      Promise.resolve().then(() => searchTerms(' ,.;! ')),
      'q',
      /at least one word/,
    );
    await refused(
      Promise.resolve().then(() => searchTerms('a'.repeat(513))),
      'q',
    );
  });
});

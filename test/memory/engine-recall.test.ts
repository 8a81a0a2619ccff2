/**
 * Reading memory end to end (SQLite `:memory:`, `ManualClock`, `personal` registry): recall by search
 * and exact fact, as_of reads, namespaces, history, and how `searchTerms` splits a query.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { searchTerms } from '../../src/memory/recall.ts';
import { ACTOR, MINUTE, NAMESPACE, refused, setup, T0 } from './helpers.ts';

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
    const { events: history } = await reader.history(NAMESPACE, { subject: 'Alice', predicate: 'city' });
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

/**
 * One as_of read cannot hold the server (issue 9, item 6): it folds at most `maxScanEvents` events
 * (past that it is refused, saying so) and reads them in slices that yield to the event loop.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { MemoryReader } from '../../src/memory/recall.ts';
import { MINUTE, NAMESPACE, refused, setup } from './helpers.ts';

async function manyNotes(s: ReturnType<typeof setup>, subjects: number, each: number) {
  for (let i = 0; i < subjects; i++) {
    await s.engine.remember(
      s.ctx,
      Array.from({ length: each }, (_, j) => ({ subject: `s${i}`, predicate: 'note', value: `alpha ${i} ${j}` })),
    );
  }
  s.clock.advance(MINUTE);
}

describe('MemoryReader as_of bounds', () => {
  it('refuses an as_of search or recall that would fold more than maxScanEvents, saying so', async (t) => {
    const s = setup(t);
    await manyNotes(s, 10, 12);
    const reader = new MemoryReader({ store: s.store, registries: s.registries, clock: s.clock, maxScanEvents: 50 });
    const now = s.clock.now();
    const base = { namespace: NAMESPACE, asOf: now, limit: 100 };
    await refused(reader.recall({ ...base, q: 'alpha' }), 'as_of', /more than 50 events/);
    await refused(reader.recall(base), 'as_of', /more than 50 events/);
    // within the cap, and without as_of (the projection answers): fine
    assert.equal((await reader.recall({ ...base, subject: 's1', predicate: 'note' })).length, 12);
    assert.equal((await reader.recall({ namespace: NAMESPACE, q: 'alpha', limit: 100 })).length, 100);
  });

  it('refuses before it reads: the cap is checked on a count, no event page is read', async (t) => {
    const s = setup(t);
    await manyNotes(s, 4, 30);
    let pages = 0;
    const store = new Proxy(s.store, {
      get(target, name, receiver) {
        if (name === 'factLog') pages++;
        const v = Reflect.get(target, name, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const reader = new MemoryReader({ store, registries: s.registries, clock: s.clock, maxScanEvents: 100 });
    const base = { namespace: NAMESPACE, asOf: s.clock.now(), limit: 100 };
    await refused(reader.recall({ ...base, q: 'alpha' }), 'as_of', /more than 100 events/);
    await refused(reader.recall(base), 'as_of', /more than 100 events/);
    assert.equal(pages, 0, 'no log page was read');
    // Only events observed by as_of count: before the notes, nothing to fold, nothing refused.
    assert.deepEqual(await reader.recall({ ...base, asOf: s.clock.now() - 2 * MINUTE }), []);
    assert.equal((await reader.recall({ ...base, subject: 's1', predicate: 'note' })).length, 30);
    assert.equal(pages, 2);
  });

  it('yields to the event loop between the pages of an as_of search', async (t) => {
    const s = setup(t);
    await manyNotes(s, 3, 2000);
    let done = false;
    let turns = 0;
    const spin = (async () => {
      while (!done) {
        await nextTurn();
        turns++;
      }
    })();
    const beliefs = await s.reader.recall({ namespace: NAMESPACE, q: 'alpha', asOf: s.clock.now(), limit: 1000 });
    done = true;
    await spin;
    assert.equal(beliefs.length, 1000);
    assert.ok(turns >= 2, `other work ran ${turns} times during the read`);
  });
});

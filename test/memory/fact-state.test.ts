/**
 * A single fact's log loaded in a batch (`loadLog`): events placed inside it are folded from their
 * place only, and the beliefs are always what `foldFact` gives over the whole log. Seeded random
 * histories of assertions and retractions at random times, checked after every event; the number of
 * full folds stays one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyAssertion, applyRetraction, loadLog, newFactState } from '../../src/memory/fact-state.ts';
import { foldFact } from '../../src/memory/fold.ts';
import type { StoredEvent } from '../../src/store/fact-store.ts';
import { seededRandom } from '../helpers/fuzz.ts';

const T0 = Date.UTC(2026, 0, 1);
const KEY = { namespace: 'acme:a', subject: 'alice', predicate: 'lives_in' };
const CITIES = ['oslo', 'rome', 'lima', 'kyiv', 'quito'];

let seq = 0;
function event(observedAt: number, value: string | null, retraction: boolean): StoredEvent {
  seq++;
  return {
    ...KEY,
    id: `e${String(seq).padStart(8, '0')}`,
    tenant: 'acme',
    value,
    valueKey: value,
    retraction,
    kind: null,
    confidence: 1,
    source: null,
    evidence: null,
    observedAt,
    recordedAt: T0,
    actor: { tenant: 'acme', agent: 'a', session: null, keyId: null },
  };
}

describe('a single fact with its log loaded', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`keeps the full fold's belief after each back-dated event (seed ${seed})`, () => {
      const random = seededRandom(seed);
      const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)] as T;
      const at = () => T0 + Math.floor(random() * 400) * 1000;
      // Values change often enough that `replaced` (10 at most) differs along the whole log.
      const stored = Array.from({ length: 120 }, () =>
        random() < 0.1 ? event(at(), random() < 0.5 ? null : pick(CITIES), true) : event(at(), pick(CITIES), false),
      );
      const state = newFactState(KEY, Math.max(...stored.map((e) => e.observedAt)));
      loadLog(state, stored, 'single');
      const log = [...stored];
      for (let i = 0; i < 80; i++) {
        const e =
          random() < 0.15 ? event(at(), random() < 0.5 ? null : pick(CITIES), true) : event(at(), pick(CITIES), false);
        if (e.retraction) applyRetraction(state, e, 'single');
        else {
          // A held value answers already_known and is not stored (as the writer does).
          const r = applyAssertion(state, e, 'single');
          if (r.alreadyKnown) continue;
        }
        log.push(e);
        assert.deepEqual([...state.beliefs.values()], foldFact(log, 'single'), `after event ${i}`);
      }
      assert.equal(state.folds, 1, 'the log was folded whole once');
    });
  }
});

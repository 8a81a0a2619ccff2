/**
 * Table tests of `foldFact` and `compareEvents` over hand-built event logs: single and multi,
 * restatement, supersession, targeted and blanket retraction, as_of, tie order, string identity.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareEvents, foldFact, MAX_REPLACED } from '../../src/memory/fold.ts';
import { typedValue } from '../../src/memory/values.ts';
import type { StoredEvent } from '../../src/store/fact-store.ts';
import type { PredicateDef } from '../../src/store/registry-store.ts';

const STRING: PredicateDef = { name: 'favorite_color', cardinality: 'single', valueType: 'string' };
const NUMBER: PredicateDef = { name: 'open_issues', cardinality: 'single', valueType: 'number' };

/** An event: `+` asserts, `-` retracts `value` (or every value when `value` is null). */
function ev(
  id: string,
  op: '+' | '-',
  value: string | number | null,
  observedAt: number,
  def: PredicateDef = STRING,
): StoredEvent {
  const typed = value === null ? null : typedValue(def, value);
  return {
    id: `ev_${id}`,
    namespace: 'acme:bot',
    tenant: 'acme',
    subject: 'alice',
    predicate: def.name,
    value: typed ? typed.value : null,
    valueKey: typed ? typed.valueKey : null,
    retraction: op === '-',
    kind: null,
    confidence: 1,
    source: null,
    evidence: null,
    observedAt,
    recordedAt: observedAt,
    actor: { tenant: 'acme', agent: 'bot', session: null, keyId: null },
  };
}

interface Case {
  name: string;
  cardinality: 'single' | 'multi';
  events: StoredEvent[];
  asOf?: number;
  /** Believed values, oldest first, each with the id of the assertion holding it. */
  want: [value: unknown, id: string][];
  /** `replaced` of the single belief, most recent first. */
  replaced?: [value: unknown, observedAt: number][];
}

function check(c: Case): void {
  const beliefs = foldFact(c.events, c.cardinality, c.asOf);
  assert.deepEqual(
    beliefs.map((b) => [b.event.value, b.event.id.slice(3)]),
    c.want,
  );
  if (c.replaced !== undefined) {
    assert.equal(beliefs.length, 1);
    assert.deepEqual(
      beliefs[0]?.replaced.map((r) => [r.value, r.observedAt]),
      c.replaced,
    );
  }
  // The input order never matters.
  const reversed = foldFact([...c.events].reverse(), c.cardinality, c.asOf);
  assert.deepEqual(reversed, beliefs, 'same result for the reversed log');
}

describe('foldFact single', () => {
  const cases: Case[] = [
    { name: 'nothing is believed of an empty log', cardinality: 'single', events: [], want: [] },
    { name: 'one assertion holds', cardinality: 'single', events: [ev('1', '+', 'blue', 10)], want: [['blue', '1']] },
    {
      name: 'the newest assertion holds and reports what it replaced',
      cardinality: 'single',
      events: [ev('1', '+', 'blue', 10), ev('2', '+', 'red', 20)],
      want: [['red', '2']],
      replaced: [['blue', 10]],
    },
    {
      name: 'a back-dated assertion does not replace a newer one',
      cardinality: 'single',
      events: [ev('1', '+', 'blue', 20), ev('2', '+', 'red', 10)],
      want: [['blue', '1']],
      replaced: [['red', 10]],
    },
    {
      name: 'a restatement keeps the first assertion holding',
      cardinality: 'single',
      events: [ev('1', '+', 'blue', 10), ev('2', '+', 'blue', 20), ev('3', '+', 'blue', 30)],
      want: [['blue', '1']],
      replaced: [],
    },
    {
      name: 'a restatement after a change keeps the first assertion of the new value',
      cardinality: 'single',
      events: [ev('1', '+', 'blue', 10), ev('2', '+', 'red', 20), ev('3', '+', 'red', 30)],
      want: [['red', '2']],
      replaced: [['blue', 10]],
    },
    {
      name: 'supersession lists every replaced value, most recent first',
      cardinality: 'single',
      events: [ev('1', '+', 'blue', 10), ev('2', '+', 'red', 20), ev('3', '+', 'green', 30)],
      want: [['green', '3']],
      replaced: [
        ['red', 20],
        ['blue', 10],
      ],
    },
    {
      name: 'going back to an earlier value is a new supersession',
      cardinality: 'single',
      events: [ev('1', '+', 'blue', 10), ev('2', '+', 'red', 20), ev('3', '+', 'blue', 30)],
      want: [['blue', '3']],
      replaced: [
        ['red', 20],
        ['blue', 10],
      ],
    },
    {
      name: 'a targeted retraction of the current value leaves nothing',
      cardinality: 'single',
      events: [ev('1', '+', 'blue', 10), ev('2', '-', 'blue', 20)],
      want: [],
    },
    {
      name: 'a targeted retraction of another value changes nothing',
      cardinality: 'single',
      events: [ev('1', '+', 'blue', 10), ev('2', '+', 'red', 20), ev('3', '-', 'blue', 30)],
      want: [['red', '2']],
      replaced: [['blue', 10]],
    },
    {
      name: 'a blanket retraction leaves nothing',
      cardinality: 'single',
      events: [ev('1', '+', 'blue', 10), ev('2', '+', 'red', 20), ev('3', '-', null, 30)],
      want: [],
    },
    {
      name: 'retracting the current value never revives the older one',
      cardinality: 'single',
      events: [ev('1', '+', 'blue', 10), ev('2', '+', 'red', 20), ev('3', '-', 'red', 30)],
      want: [],
    },
    {
      name: 'retracting every replaced value one by one revives nothing either',
      cardinality: 'single',
      events: [ev('1', '+', 'blue', 10), ev('2', '+', 'red', 20), ev('3', '-', 'red', 30), ev('4', '-', 'blue', 40)],
      want: [],
    },
    {
      name: 'a new assertion after a retraction holds and replaced nothing',
      cardinality: 'single',
      events: [ev('1', '+', 'blue', 10), ev('2', '-', 'blue', 20), ev('3', '+', 'green', 30)],
      want: [['green', '3']],
      replaced: [],
    },
    {
      name: 'the retracted value asserted again holds again',
      cardinality: 'single',
      events: [ev('1', '+', 'blue', 10), ev('2', '-', null, 20), ev('3', '+', 'blue', 30)],
      want: [['blue', '3']],
      replaced: [],
    },
    {
      name: 'a retraction before any assertion does nothing to a later one',
      cardinality: 'single',
      events: [ev('1', '-', 'blue', 10), ev('2', '+', 'blue', 20)],
      want: [['blue', '2']],
    },
  ];
  for (const c of cases) it(c.name, () => check(c));

  it(`lists only the ${MAX_REPLACED} most recent replaced values`, () => {
    const n = MAX_REPLACED + 3;
    const events = Array.from({ length: n + 1 }, (_, i) => ev(String(i).padStart(2, '0'), '+', `v${i}`, 10 * (i + 1)));
    check({
      name: 'long history',
      cardinality: 'single',
      events,
      want: [[`v${n}`, String(n).padStart(2, '0')]],
      replaced: Array.from({ length: MAX_REPLACED }, (_, k) => [`v${n - 1 - k}`, 10 * (n - k)]),
    });
  });
});

describe('foldFact multi', () => {
  const cases: Case[] = [
    {
      name: 'values accumulate, oldest first',
      cardinality: 'multi',
      events: [ev('1', '+', 'nuts', 10), ev('2', '+', 'milk', 20), ev('3', '+', 'eggs', 30)],
      want: [
        ['nuts', '1'],
        ['milk', '2'],
        ['eggs', '3'],
      ],
    },
    {
      name: 'a restatement keeps the first assertion holding',
      cardinality: 'multi',
      events: [ev('1', '+', 'nuts', 10), ev('2', '+', 'milk', 20), ev('3', '+', 'nuts', 30)],
      want: [
        ['nuts', '1'],
        ['milk', '2'],
      ],
    },
    {
      name: 'a targeted retraction removes that value only',
      cardinality: 'multi',
      events: [ev('1', '+', 'nuts', 10), ev('2', '+', 'milk', 20), ev('3', '-', 'nuts', 30)],
      want: [['milk', '2']],
    },
    {
      name: 'a blanket retraction removes every value',
      cardinality: 'multi',
      events: [ev('1', '+', 'nuts', 10), ev('2', '+', 'milk', 20), ev('3', '-', null, 30)],
      want: [],
    },
    {
      name: 'values asserted after a blanket retraction hold',
      cardinality: 'multi',
      events: [ev('1', '+', 'nuts', 10), ev('2', '-', null, 20), ev('3', '+', 'eggs', 30), ev('4', '+', 'nuts', 40)],
      want: [
        ['eggs', '3'],
        ['nuts', '4'],
      ],
    },
    {
      name: 'a retraction of a value never held changes nothing',
      cardinality: 'multi',
      events: [ev('1', '+', 'nuts', 10), ev('2', '-', 'soy', 20)],
      want: [['nuts', '1']],
    },
  ];
  for (const c of cases) it(c.name, () => check(c));

  it('gives every belief an empty replaced list', () => {
    const beliefs = foldFact([ev('1', '+', 'nuts', 10), ev('2', '+', 'milk', 20)], 'multi');
    assert.deepEqual(
      beliefs.map((b) => b.replaced),
      [[], []],
    );
  });
});

describe('foldFact as_of', () => {
  const single = [ev('1', '+', 'blue', 10), ev('2', '+', 'red', 20), ev('3', '-', 'red', 30), ev('4', '+', 'teal', 40)];
  const singleCases: [asOf: number, want: Case['want']][] = [
    [9, []],
    [10, [['blue', '1']]],
    [15, [['blue', '1']]],
    [20, [['red', '2']]],
    [29, [['red', '2']]],
    [30, []],
    [39, []],
    [40, [['teal', '4']]],
    [1e15, [['teal', '4']]],
  ];
  for (const [asOf, want] of singleCases) {
    it(`single as of ${asOf}`, () => check({ name: '', cardinality: 'single', events: single, asOf, want }));
  }
  it('single as of 25 reports only what was replaced by then', () =>
    check({
      name: '',
      cardinality: 'single',
      events: single,
      asOf: 25,
      want: [['red', '2']],
      replaced: [['blue', 10]],
    }));

  const multi = [ev('1', '+', 'nuts', 10), ev('2', '+', 'milk', 20), ev('3', '-', 'nuts', 30), ev('4', '-', null, 40)];
  const multiCases: [asOf: number, want: Case['want']][] = [
    [9, []],
    [10, [['nuts', '1']]],
    [
      20,
      [
        ['nuts', '1'],
        ['milk', '2'],
      ],
    ],
    [30, [['milk', '2']]],
    [40, []],
  ];
  for (const [asOf, want] of multiCases) {
    it(`multi as of ${asOf}`, () => check({ name: '', cardinality: 'multi', events: multi, asOf, want }));
  }

  it('undefined as_of folds every event, even future ones', () => {
    check({
      name: '',
      cardinality: 'single',
      events: [ev('1', '+', 'blue', 10), ev('2', '+', 'red', 9e15)],
      want: [['red', '2']],
    });
  });
});

describe('foldFact tie order', () => {
  it('applies an assertion before a retraction at the same observed_at, whatever the ids', () => {
    check({
      name: '',
      cardinality: 'single',
      events: [ev('2', '+', 'blue', 10), ev('1', '-', 'blue', 10)],
      want: [],
    });
    check({ name: '', cardinality: 'multi', events: [ev('9', '+', 'nuts', 10), ev('1', '-', null, 10)], want: [] });
  });

  it('orders assertions at the same observed_at by id', () => {
    check({
      name: '',
      cardinality: 'single',
      events: [ev('2', '+', 'red', 10), ev('1', '+', 'blue', 10)],
      want: [['red', '2']],
      replaced: [['blue', 10]],
    });
  });

  it('keeps the lower id as the holder of a value restated at the same observed_at', () => {
    check({
      name: '',
      cardinality: 'multi',
      events: [ev('b', '+', 'nuts', 10), ev('a', '+', 'nuts', 10)],
      want: [['nuts', 'a']],
    });
  });
});

describe('compareEvents', () => {
  it('sorts by observed_at, then assertion before retraction, then id', () => {
    const events = [
      ev('5', '-', null, 20),
      ev('4', '+', 'c', 20),
      ev('1', '-', 'a', 20),
      ev('3', '+', 'b', 20),
      ev('9', '+', 'a', 10),
      ev('0', '-', 'z', 30),
    ];
    assert.deepEqual(
      [...events].sort(compareEvents).map((e) => e.id),
      ['ev_9', 'ev_3', 'ev_4', 'ev_1', 'ev_5', 'ev_0'],
    );
  });

  it('returns 0 only for the same id at the same time and kind', () => {
    const a = ev('1', '+', 'a', 10);
    assert.equal(compareEvents(a, { ...a }), 0);
    assert.ok(compareEvents(a, ev('2', '+', 'a', 10)) < 0);
    assert.ok(compareEvents(ev('2', '+', 'a', 10), a) > 0);
  });
});

describe('foldFact value identity', () => {
  it('treats strings that differ only in case as the same value (first spelling kept)', () => {
    check({
      name: '',
      cardinality: 'single',
      events: [ev('1', '+', 'Blue', 10), ev('2', '+', 'BLUE', 20), ev('3', '+', 'blue', 30)],
      want: [['Blue', '1']],
      replaced: [],
    });
    check({
      name: '',
      cardinality: 'multi',
      events: [ev('1', '+', 'Peanuts', 10), ev('2', '+', 'peanuts', 20), ev('3', '+', 'Milk', 30)],
      want: [
        ['Peanuts', '1'],
        ['Milk', '3'],
      ],
    });
  });

  it('retracts a value named in another case', () => {
    check({ name: '', cardinality: 'single', events: [ev('1', '+', 'Blue', 10), ev('2', '-', 'bLUE', 20)], want: [] });
    check({
      name: '',
      cardinality: 'multi',
      events: [ev('1', '+', 'Peanuts', 10), ev('2', '+', 'milk', 20), ev('3', '-', 'PEANUTS', 30)],
      want: [['milk', '2']],
    });
  });

  it('treats numbers by numeric value', () => {
    check({
      name: '',
      cardinality: 'single',
      events: [ev('1', '+', 3, 10, NUMBER), ev('2', '+', 3.0, 20, NUMBER), ev('3', '-', 3, 30, NUMBER)],
      want: [],
    });
    check({
      name: '',
      cardinality: 'single',
      events: [ev('1', '+', 3, 10, NUMBER), ev('2', '+', 30, 20, NUMBER)],
      want: [[30, '2']],
      replaced: [[3, 10]],
    });
  });
});

/**
 * The sizer of chunks and slices by their measured cost (src/common/chunk-sizer.ts): an import's
 * chunks, a purge's transactions. Times are told to it, never measured by the test.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChunkSizer } from '../../src/common/chunk-sizer.ts';

describe('ChunkSizer', () => {
  it('fits the next chunk to the budget at the median cost of the last three, growing at most twice, within 1..max', () => {
    const sizer = new ChunkSizer({ max: 250, budgetMs: 4 });
    assert.equal(sizer.size, 32);
    sizer.took(32, 16); // 0.5 ms an event
    assert.equal(sizer.size, 8);
    sizer.took(8, 0.5); // cheap now (the lower of two costs): at most twice the last
    assert.equal(sizer.size, 16);
    sizer.took(16, 0);
    assert.equal(sizer.size, 32);
    for (let i = 0; i < 5; i++) sizer.took(sizer.size, 0);
    assert.equal(sizer.size, 250, 'never past max');
    sizer.took(250, 5000);
    assert.equal(sizer.size, 250, 'one slow chunk (a preempted process) is not the cost');
    sizer.took(250, 5000);
    assert.equal(sizer.size, 1, 'two of three are: never below one');
    sizer.took(0, 10);
    assert.equal(sizer.size, 1, 'an empty chunk says nothing');
    assert.equal(new ChunkSizer({ max: 7, budgetMs: 4 }).size, 7);
  });

  it('never sizes below min, however much the last chunks cost (a fixed cost per chunk)', () => {
    const sizer = new ChunkSizer({ max: 256, budgetMs: 2, first: 64, min: 16 });
    sizer.took(64, 40); // 0.625 ms an event: 3 would fit
    assert.equal(sizer.size, 16);
    sizer.took(16, 30);
    assert.equal(sizer.size, 16);
    assert.equal(new ChunkSizer({ max: 256, budgetMs: 2, first: 4, min: 16 }).size, 16, 'the first chunk too');
    assert.throws(
      () => new ChunkSizer({ max: 8, budgetMs: 2, min: 9 }),
      /'min' must be a whole number from 1 to 'max' \(8\): got 9/,
    );
  });

  it('refuses a max below 1 and a budget that is not positive, naming them', () => {
    assert.throws(() => new ChunkSizer({ max: 0, budgetMs: 4 }), /'max' must be ≥ 1: got 0/);
    assert.throws(() => new ChunkSizer({ max: 10, budgetMs: 0 }), /'budgetMs' must be > 0: got 0/);
  });
});

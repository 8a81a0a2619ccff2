/**
 * The answer slab (issue 21): a worker's answer goes in the lowest free slot, one too big for a slot or
 * with every slot held is left to be moved, and a slot freed is taken again.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AnswerSlab } from '../../../src/store/sqlite/answer-slab.ts';

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

describe('AnswerSlab', () => {
  it('puts answers in the lowest free slot and shows them through a view until freed', () => {
    const memory = AnswerSlab.memory(3, 64);
    const worker = new AnswerSlab(memory);
    const loop = new AnswerSlab(memory); // the other thread's side: the same shared memory
    const a = worker.put(bytes(10, 1));
    const b = worker.put(bytes(64, 2));
    assert.deepEqual(a, { slot: 0, length: 10 });
    assert.deepEqual(b, { slot: 1, length: 64 });
    assert.deepEqual([...loop.view(a as NonNullable<typeof a>)], Array(10).fill(1));
    assert.deepEqual([...loop.view(b as NonNullable<typeof b>)], Array(64).fill(2));
    assert.equal(loop.held(), 2);
    loop.free(0);
    assert.equal(worker.held(), 1);
    assert.deepEqual(worker.put(bytes(5, 3)), { slot: 0, length: 5 }, 'the freed slot is the lowest again');
    assert.deepEqual([...loop.view({ slot: 1, length: 64 })], Array(64).fill(2), 'a held slot is never written');
  });

  it('leaves an answer too big for a slot, or one with every slot held, to be moved', () => {
    const slab = new AnswerSlab(AnswerSlab.memory(2, 16));
    assert.equal(slab.put(bytes(17, 1)), null);
    assert.equal(slab.held(), 0, 'nothing is held for an answer that did not fit');
    assert.ok(slab.put(bytes(16, 1)));
    assert.ok(slab.put(bytes(1, 1)));
    assert.equal(slab.put(bytes(1, 1)), null);
    slab.free(1);
    assert.deepEqual(slab.put(bytes(2, 1)), { slot: 1, length: 2 });
  });
});

/** Lent answer bytes (issue 21): given back once, by whoever wrote them; bytes never lent pass through. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answerWritten, lendAnswer } from '../../src/store/lent-answers.ts';

describe('lent answers', () => {
  it('gives lent bytes back exactly once, however often they are said written', () => {
    let given = 0;
    const bytes = lendAnswer(new Uint8Array(4), () => given++);
    answerWritten(bytes);
    answerWritten(bytes);
    assert.equal(given, 1);
  });

  it('lets bytes never lent through, and keeps each lender to its own bytes', () => {
    const given: string[] = [];
    const a = lendAnswer(new Uint8Array(1), () => given.push('a'));
    const b = lendAnswer(new Uint8Array(1), () => given.push('b'));
    answerWritten(new Uint8Array(1));
    answerWritten(b);
    assert.deepEqual(given, ['b']);
    answerWritten(a);
    assert.deepEqual(given, ['b', 'a']);
  });
});

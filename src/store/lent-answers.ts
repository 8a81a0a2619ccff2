/**
 * @module
 * Answer bytes a store lends instead of giving (SQLite: a view on its read workers' shared slab,
 * `sqlite/answer-slab.ts`): the store registers how to take them back, and whoever writes them says
 * when it is done (`answerWritten`), after which the bytes must not be read again. Bytes never lent
 * pass through `answerWritten` unchanged, so a caller treats every `AnswerBytes` alike. Bytes lent
 * and never given back only cost their slot: once every slot is out, a store gives new bytes.
 */
import type { AnswerBytes } from './answer-text-port.ts';

const lenders = new WeakMap<AnswerBytes, () => void>();

/** Store side: marks `bytes` as lent; `takeBack` runs once, when the caller is done with them. */
export function lendAnswer(bytes: AnswerBytes, takeBack: () => void): AnswerBytes {
  lenders.set(bytes, takeBack);
  return bytes;
}

/**
 * Caller side: `bytes` were written (or will never be): a lender may reuse their memory now. Safe to
 * call for bytes never lent, and more than once.
 */
export function answerWritten(bytes: AnswerBytes): void {
  const takeBack = lenders.get(bytes);
  if (!takeBack) return;
  lenders.delete(bytes);
  takeBack();
}

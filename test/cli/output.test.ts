import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cellText, renderTable } from '../../src/cli/output.ts';

describe('renderTable', () => {
  const columns = [
    { header: 'id', cell: (r: { id: string; note: string | null }) => r.id },
    { header: 'note', cell: (r: { id: string; note: string | null }) => r.note },
  ];

  it('aligns columns under upper-case headers, shows null as -, and trims trailing space', () => {
    const text = renderTable(
      [
        { id: 'a', note: 'first' },
        { id: 'bbbb', note: null },
      ],
      columns,
      '(none)',
    );
    assert.equal(text, 'ID    NOTE\na     first\nbbbb  -\n');
  });

  it('cuts a long cell with an ellipsis and prints the empty text for no rows', () => {
    assert.equal(renderTable([{ id: 'x', note: 'abcdefghij' }], columns, '(none)', 5), 'ID  NOTE\nx   abcd…\n');
    assert.equal(renderTable([], columns, '(no keys)'), '(no keys)\n');
  });
});

describe('cellText', () => {
  it('joins lists, writes objects as JSON and folds whitespace', () => {
    assert.equal(cellText(['a', 'b']), 'a, b');
    assert.equal(cellText([]), '-');
    assert.equal(cellText({ a: 1 }), '{"a":1}');
    assert.equal(cellText('two\nlines'), 'two lines');
    assert.equal(cellText(false), 'false');
  });
});

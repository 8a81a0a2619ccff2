/**
 * A big batch's answer is made and written in slices (`slicedJsonList`): the bytes are those of
 * `JSON.stringify` on the whole object, and `POST /v1/memories` with more than `SLICED_FROM_ITEMS`
 * statements answers JSON with its results in the order sent.
 */
import assert from 'node:assert/strict';
import { text } from 'node:stream/consumers';
import { describe, it } from 'node:test';
import { SLICED_FROM_ITEMS, slicedJsonList } from '../../src/server/sliced-json.ts';
import { startTestMemoryServer } from '../helpers/memory-server.ts';

describe('slicedJsonList', () => {
  it('writes what JSON.stringify writes for the whole object', async () => {
    for (const items of [
      [],
      [1],
      [{ a: 'x"y', b: null, c: [1, 2] }],
      Array.from({ length: 1000 }, (_, i) => ({ i })),
    ]) {
      assert.equal(await text(slicedJsonList('results', items)), JSON.stringify({ results: items }));
    }
  });
});

describe('POST /v1/memories with a big batch', () => {
  it('answers JSON with one result per statement, in the order sent', async (t) => {
    const server = await startTestMemoryServer();
    t.after(() => server.close());
    const key = await server.agentKey('acme', 'big');
    const statements = Array.from({ length: 3 * SLICED_FROM_ITEMS + 5 }, (_, i) => ({
      subject: 'project',
      predicate: 'note',
      value: `note ${i}`,
    }));
    const r = await server.call('POST', '/v1/memories', { key, body: { statements } });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(
      r.body.results.map((x: { event: { value: string } }) => x.event.value),
      statements.map((s) => s.value),
    );
    const again = await server.call('POST', '/v1/memories', { key, body: { statements: statements.slice(0, 70) } });
    assert.ok(again.body.results.every((x: { already_known: boolean; event: null }) => x.already_known && !x.event));
  });
});

/**
 * A 1 MiB-style import over HTTP does not hold another tenant (issue 21): while the import is being
 * stored, another tenant's remember is taken, and it commits between two of the import's chunks, not
 * after the last. Counted by a hook on the store's writes (an import chunk locks its facts, a batch
 * does not); the import is held after its first chunk until the other write was asked for.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { newEventId } from '../../src/common/ids.ts';
import type { FactWriteScope } from '../../src/store/fact-store.ts';
import { startTestMemoryServer } from '../helpers/memory-server.ts';

/** Polls `check` every turn for at most 60 s; throws naming `what`. */
async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await nextTurn();
  }
}

describe('POST /v1/events/import beside another tenant', () => {
  it("commits another tenant's remember between two of the import's chunks", async () => {
    // A budget smaller than the import's body (~100 KB), as 512 KiB is smaller than a 1 MiB import.
    const srv = await startTestMemoryServer({ maxBodyBytesInWork: 50_000 });
    try {
      const keyA = await srv.agentKey('imp', 'run-1');
      const keyB = await srv.agentKey('other', 'b');
      const statements = Array.from({ length: 300 }, (_, i) => ({
        subject: 'proj',
        predicate: 'note',
        value: `n ${i}`,
      }));
      assert.equal((await srv.call('POST', '/v1/memories', { key: keyA, body: { statements } })).status, 200);
      const first = { subject: 'bob', predicate: 'note', value: 'before' };
      assert.equal((await srv.call('POST', '/v1/memories', { key: keyB, body: first })).status, 200);
      // The import: A's events again, new ids, into a namespace of their own.
      const body = (await srv.call('GET', '/v1/events?namespace=imp:run-1', { key: keyA })).text
        .split('\n')
        .filter((l) => l.includes('"subject"'))
        .map((l) => JSON.stringify({ ...JSON.parse(l), id: newEventId(), namespace: 'imp:copy' }))
        .join('\n');

      const { engine } = srv.running.server;
      const { store } = srv.running;
      const order: string[] = [];
      let asked = false;
      const remember = engine.remember.bind(engine);
      engine.remember = (...args: Parameters<typeof remember>) => {
        asked = true;
        return remember(...args);
      };
      let other: Promise<{ status: number }> | null = null;
      const writeFacts = store.writeFacts.bind(store);
      store.writeFacts = (async (scope: FactWriteScope, plan: Parameters<typeof writeFacts>[1]) => {
        const result = await writeFacts(scope, plan);
        const kind = scope.lock ? 'chunk' : 'batch';
        order.push(kind);
        if (kind === 'chunk' && other === null) {
          // Still holding the writer: B's remember arrives now and queues behind this chunk.
          other = srv.call('POST', '/v1/memories', { key: keyB, body: { ...first, value: 'during the import' } });
          await until("B's remember to reach the engine", () => asked);
          for (let i = 0; i < 3; i++) await nextTurn(); // its registry read and its place in the queue
        }
        return result;
      }) as typeof store.writeFacts;

      const imported = await srv.call('POST', '/v1/events/import', {
        key: srv.adminKey,
        body,
        headers: { 'content-type': 'application/x-ndjson' },
      });
      assert.equal(imported.status, 200, imported.text);
      assert.equal(imported.body.imported, 300);
      assert.ok(body.length > 50_000);
      assert.equal((await (other as unknown as Promise<{ status: number }>)).status, 200);
      const chunks = order.filter((k) => k === 'chunk').length;
      assert.ok(chunks >= 4, `300 events in chunks of 32, then at most twice the last: ${order}`);
      assert.ok(order.indexOf('batch') < order.lastIndexOf('chunk'), `B's write went in between: ${order}`);
      const recall = await srv.call('GET', '/v1/memories?subject=bob', { key: keyB });
      assert.equal(recall.body.beliefs.length, 2);
    } finally {
      await srv.close();
    }
  });
});

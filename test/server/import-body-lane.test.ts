/**
 * An import's body waits in a lane of its own of the body budget (issue 21, src/server/body-budget.ts):
 * a 1 MiB import is larger than the shared budget, and in it would run alone, every other tenant's
 * write waiting until the import is answered. Here the import is admitted while its body is still
 * coming, another tenant writes and reads meanwhile, and a second import waits for the first.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { startTestMemoryServer } from '../helpers/memory-server.ts';

/** Opens a raw connection and sends an import's head and the first bytes of its body. */
function rawImport(url: string, key: string, length: number, body: string): Socket {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  socket.on('error', () => {});
  socket.write(
    `POST /v1/events/import HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\n` +
      `content-type: application/x-ndjson\r\ncontent-length: ${length}\r\n\r\n${body}`,
  );
  return socket;
}

/** Polls `check` every turn for at most 60 s; throws naming `what` (a leak must fail, not hang). */
async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await nextTurn();
  }
}

describe('POST /v1/events/import and the body budget', () => {
  it("reads an import's body in its own lane: another tenant writes meanwhile, a second import waits", async () => {
    const srv = await startTestMemoryServer();
    const sockets: Socket[] = [];
    try {
      const keyB = await srv.agentKey('lane-b', 'b');
      const { bodyBudget, aloneBodies } = srv.running.server;
      // Larger than the shared budget (512 KiB): before, it ran alone there.
      const first = rawImport(srv.url, srv.adminKey, 600_000, '{"namespace"');
      sockets.push(first);
      await until('the import to be admitted', () => aloneBodies.inWork > 0);
      assert.equal(bodyBudget.inWork, 0, 'the import takes no room of the shared budget');
      const wrote = await srv.call('POST', '/v1/memories', {
        key: keyB,
        body: { subject: 'bob', predicate: 'note', value: 'while an import is read' },
      });
      assert.equal(wrote.status, 200, 'a write with a body is not held by the import');
      const read = await srv.call('GET', '/v1/memories?q=import', { key: keyB });
      assert.equal(read.status, 200);
      assert.equal(read.body.beliefs.length, 1);
      assert.equal(aloneBodies.inWork, 600_000, 'the import is still in work (its body is not all here)');

      const second = rawImport(srv.url, srv.adminKey, 700_000, '{');
      sockets.push(second);
      await until('the second import to wait', () => aloneBodies.waiting === 1);
      first.destroy();
      await until('the second import to be admitted', () => aloneBodies.inWork === 700_000);
      assert.equal(aloneBodies.waiting, 0);
      second.destroy();
      await until('the bytes to be given back', () => aloneBodies.inWork === 0);
      assert.equal(bodyBudget.inWork, 0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await srv.close();
    }
  });
});

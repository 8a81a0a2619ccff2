/**
 * `MemoryWriter.import` stores events in the order the export gives them (how the source wrote them),
 * not in observed order: search answers "newest written first", so an import reproduces the source's
 * search order, SQLite to SQLite and SQLite to PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mintAgentKey, newAdminKey, type Replica, startReplica } from '../helpers/memory-replicas.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

describe('import keeps the source’s write order', () => {
  let source: TestMemoryServer;
  let copy: TestMemoryServer;
  let pg: TestPostgres;
  let replica: Replica;
  const admin = newAdminKey();
  let exported = '';
  const searched = async (call: (path: string) => Promise<{ body: any }>) =>
    (await call('/v1/memories?q=tea&limit=1')).body.beliefs.map((b: { value: unknown }) => b.value);

  before(async () => {
    [source, copy, pg] = await Promise.all([
      startTestMemoryServer(),
      startTestMemoryServer({ adminKey: admin }),
      startPostgres(),
    ]);
    replica = await startReplica(await pg.createDatabase(), admin);
    const key = await source.agentKey('ord', 'a');
    // Written second but observed earlier: the newest written is 'tea two'.
    for (const [value, at] of [
      ['tea one', '2026-03-01T00:00:00Z'],
      ['tea two', '2026-01-01T00:00:00Z'],
    ]) {
      assert.equal(
        (
          await source.call('POST', '/v1/memories', {
            key,
            body: { subject: 'user', predicate: 'note', value, observed_at: at },
          })
        ).status,
        200,
      );
    }
    exported = (await source.call('GET', '/v1/events', { key: source.adminKey })).text;
    assert.deepEqual(await searched((p) => source.call('GET', p, { key })), ['tea two']);
  });
  after(async () => {
    await Promise.all([source?.close(), copy?.close(), replica?.stop()]);
    await pg?.stop();
  });

  it('SQLite to SQLite', async () => {
    const r = await copy.call('POST', '/v1/events/import', {
      key: admin,
      body: exported,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(r.status, 200, r.text);
    const key = await copy.agentKey('ord', 'a');
    assert.deepEqual(await searched((p) => copy.call('GET', p, { key })), ['tea two']);
  });

  it('SQLite to PostgreSQL', async () => {
    const res = await fetch(`${replica.url}/v1/events/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/x-ndjson' },
      body: exported,
    });
    assert.equal(res.status, 200, await res.text());
    const key = await mintAgentKey(replica, admin, 'ord', 'a');
    assert.deepEqual(await searched((p) => replica.call('GET', p, key)), ['tea two']);
  });
});

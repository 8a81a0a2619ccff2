/**
 * `TetherCheckpointSaver` against a real memory server (SQLite, a manual clock): writes are fenced by
 * the agent's lease — a second writer whose epoch went stale gets `lease_lost` and stores nothing —
 * a saver can share the agent handle the agent holds, and export / purge / import carry checkpoints
 * like other resume records. LangGraph's own validation suite runs in `validation.vitest.ts`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { ManualClock } from '../../src/common/clock.ts';
import { TetherError } from '../../src/common/errors.ts';
import { TetherCheckpointSaver } from '../../src/langgraph/checkpoint-saver.ts';
import { TetherClient } from '../../src/sdk/client.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

const meta = { source: 'loop' as const, step: 1, parents: {} };

function checkpointWith(value: string) {
  return { ...emptyCheckpoint(), id: uuid6(3), channel_values: { progress: value }, channel_versions: { progress: 1 } };
}

describe('TetherCheckpointSaver', () => {
  const clock = new ManualClock(Date.now());
  let server: TestMemoryServer;
  before(async () => {
    server = await startTestMemoryServer({ clock });
  });
  after(() => server.close());

  it('refuses a second writer with a stale epoch (409 lease_lost) and stores nothing of it', async () => {
    const key = await server.agentKey('lg', `stale-${uuid6(3).slice(0, 8)}`);
    const first = new TetherCheckpointSaver({ url: server.url, key, holder: 'pod-a', ttlMs: 60_000 });
    const thread = { configurable: { thread_id: 'job', checkpoint_ns: '' } };
    const c1 = checkpointWith('step 1 by pod-a');
    await first.put(thread, c1, meta, {});
    const firstEpoch = (await first.agent()).epoch;

    // pod-a stalls past its lease on the server's clock; pod-b takes the lease over and writes.
    clock.advance(61_000);
    const second = new TetherCheckpointSaver({ url: server.url, key, holder: 'pod-b', ttlMs: 60_000 });
    const c2 = checkpointWith('step 2 by pod-b');
    const put2 = await second.put({ configurable: { ...thread.configurable, checkpoint_id: c1.id } }, c2, meta, {});
    assert.ok((await second.agent()).epoch > firstEpoch);

    // pod-a comes back (its own clock says its lease is still good) and writes with its old epoch.
    const stale = checkpointWith('step 2 by pod-a');
    await assert.rejects(
      first.put(thread, stale, meta, {}),
      (err: unknown) => err instanceof TetherError && err.code === 'lease_lost',
    );
    await assert.rejects(
      first.putWrites(put2, [['progress', 'late']], 'task-a'),
      (err: unknown) => err instanceof TetherError && err.code === 'lease_lost',
    );
    await assert.rejects(
      first.deleteThread('job'),
      (err: unknown) => err instanceof TetherError && err.code === 'lease_lost',
    );

    const latest = await second.getTuple(thread);
    assert.equal(latest?.checkpoint.id, c2.id);
    assert.deepEqual(latest?.checkpoint.channel_values, { progress: 'step 2 by pod-b' });
    assert.deepEqual(latest?.pendingWrites, [], "pod-a's pending write was not stored");
    const ids: string[] = [];
    for await (const t of second.list({ configurable: { thread_id: 'job' } })) ids.push(t.checkpoint.id);
    assert.deepEqual(ids, [c2.id, c1.id], "pod-a's stale checkpoint was not stored");
    await second.close();
    await first.close();
  });

  it("writes under an agent handle the agent holds, and stops when that handle's lease ends", async () => {
    const key = await server.agentKey('lg', `shared-${uuid6(3).slice(0, 8)}`);
    const client = TetherClient.fromKey({ url: server.url, key });
    const agent = await client.resume({ holder: 'worker' });
    const saver = new TetherCheckpointSaver({ client, agent });
    const config = await saver.put({ configurable: { thread_id: 't' } }, checkpointWith('a'), meta, {});
    await saver.putWrites(config, [['progress', 'b']], 'task');
    const tuple = await saver.getTuple(config);
    assert.deepEqual(tuple?.pendingWrites, [['task', 'progress', 'b']]);
    assert.equal((await client.lease()).epoch, agent.epoch, 'the saver took no lease of its own');
    await saver.close();
    assert.equal((await client.lease()).held, true, "closing the saver leaves the agent's lease alone");
    await agent.release();
    await assert.rejects(
      saver.put(config, checkpointWith('c'), meta, {}),
      (err: unknown) => err instanceof TetherError && err.code === 'lease_lost',
    );
  });

  it('exports checkpoints and pending writes, and an import restores them after a purge', async () => {
    const agentName = `backup-${uuid6(3).slice(0, 8)}`;
    const key = await server.agentKey('lg', agentName);
    const saver = new TetherCheckpointSaver({ url: server.url, key });
    const config = await saver.put({ configurable: { thread_id: 'kept' } }, checkpointWith('saved'), meta, {});
    await saver.putWrites(config, [['progress', 'pending']], 'task');
    await saver.close();
    const before = await saver.getTuple(config);

    const exported = await server.call('GET', `/v1/events?namespace=lg:${agentName}`, { key: server.adminKey });
    const lines = exported.text.split('\n').filter(Boolean);
    const kinds = lines.map((l) => JSON.parse(l).resume_record?.kind).filter(Boolean);
    assert.deepEqual(kinds, ['checkpoint', 'checkpoint_write']);

    const purged = await server.call('DELETE', `/v1/namespaces/lg:${agentName}`, { key: server.adminKey });
    assert.equal(purged.status, 200);
    assert.equal(await saver.getTuple(config), undefined, 'the purge erased the checkpoint');

    const imported = await server.call('POST', '/v1/events/import', {
      key: server.adminKey,
      body: exported.text,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(imported.status, 200, imported.text);
    assert.equal(imported.body.resume_records, 2);
    assert.deepEqual(await saver.getTuple(config), before);
  });
});

/**
 * The lease over HTTP with whole records: two holders (lease_held, takeover after the TTL with a
 * higher epoch, every write of the old holder refused with lease_lost and not stored), release and
 * re-acquire, epochs after a purge and after a restart, and 200 concurrent acquires giving one holder.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../../src/common/clock.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../../helpers/memory-server.ts';

const epochHeader = (epoch: number) => ({ 'x-lease-epoch': String(epoch) });

/** One write of every resume record kind, as [method, path, body]. */
const WRITES: [string, string, unknown][] = [
  ['PATCH', '/v1/working-state', { goal: 'stale goal' }],
  ['POST', '/v1/milestones', { name: 'stale milestone' }],
  ['POST', '/v1/turns', { role: 'assistant', content: 'stale turn' }],
  ['POST', '/v1/outputs', { content: 'stale output' }],
  ['PUT', '/v1/pointers/stale', { type: 'env', fields: { A: '1' } }],
  ['DELETE', '/v1/pointers/kept', undefined],
];

describe('lease fencing over HTTP', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  let server: TestMemoryServer;
  let key: string;
  before(async () => {
    server = await startTestMemoryServer({ clock });
    key = await server.agentKey('agents', 'run-1', 86_400);
  });
  after(() => server.close());

  it('refuses B while A holds the lease, lets B take over after the TTL, refuses every write of A', async () => {
    const a = await server.call('POST', '/v1/lease/acquire', { key, body: { holder: 'pod-a', ttl_ms: 5000 } });
    assert.equal(a.status, 200, a.text);
    assert.equal(a.body.holder, 'pod-a');
    assert.equal(a.body.held, true);
    const epochA = a.body.epoch as number;
    const kept = await server.call('PUT', '/v1/pointers/kept', {
      key,
      headers: epochHeader(epochA),
      body: { type: 'git_ref', fields: { ref: 'main' } },
    });
    assert.equal(kept.status, 200, kept.text);

    const b1 = await server.call('POST', '/v1/lease/acquire', { key, body: { holder: 'pod-b' } });
    assert.equal(b1.status, 409);
    assert.equal(b1.body.error.code, 'lease_held');
    assert.match(b1.body.error.message, /'pod-a'.*until 2026-01-01T00:00:05.000Z/);

    clock.advance(5000);
    const b = await server.call('POST', '/v1/lease/acquire', { key, body: { holder: 'pod-b' } });
    assert.equal(b.status, 200, b.text);
    const epochB = b.body.epoch as number;
    assert.ok(epochB > epochA);

    for (const [method, path, body] of WRITES) {
      const r = await server.call(method, path, { key, headers: epochHeader(epochA), body });
      assert.equal(r.status, 409, `${method} ${path}: ${r.text}`);
      assert.equal(r.body.error.code, 'lease_lost', `${method} ${path}`);
    }
    const state = await server.call('GET', '/v1/working-state', { key });
    assert.equal(state.body.version, 0);
    assert.deepEqual((await server.call('GET', '/v1/milestones', { key })).body.milestones, []);
    assert.equal((await server.call('GET', '/v1/turns', { key })).body.total, 0);
    assert.deepEqual((await server.call('GET', '/v1/outputs', { key })).body.outputs, []);
    assert.deepEqual(
      (await server.call('GET', '/v1/pointers', { key })).body.pointers.map((p: { name: string }) => p.name),
      ['kept'],
    );

    const bWrites: [string, string, unknown][] = [
      ['PATCH', '/v1/working-state', { goal: 'b goal' }],
      ['POST', '/v1/milestones', { name: 'b milestone' }],
      ['POST', '/v1/turns', { role: 'assistant', content: 'b turn' }],
      ['POST', '/v1/outputs', { content: 'b output' }],
      ['PUT', '/v1/pointers/b', { type: 'env', fields: { B: '1' } }],
      ['DELETE', '/v1/pointers/kept', undefined],
    ];
    for (const [method, path, body] of bWrites) {
      const r = await server.call(method, path, { key, headers: epochHeader(epochB), body });
      assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.text}`);
    }
    const after = await server.call('GET', '/v1/working-state', { key });
    assert.deepEqual([after.body.goal, after.body.last_milestone, after.body.version], ['b goal', 'b milestone', 2]);
    assert.deepEqual(
      (await server.call('GET', '/v1/milestones', { key })).body.milestones.map((m: { name: string }) => m.name),
      ['b milestone'],
    );
    assert.deepEqual(
      (await server.call('GET', '/v1/turns', { key })).body.turns.map((t: { content: string }) => t.content),
      ['b turn'],
    );
    assert.equal((await server.call('GET', '/v1/outputs', { key })).body.outputs.length, 1);
    assert.deepEqual(
      (await server.call('GET', '/v1/pointers', { key })).body.pointers.map((p: { name: string }) => p.name),
      ['b'],
    );
    await server.call('POST', '/v1/lease/release', { key, body: { epoch: epochB } });
  });

  it('refuses a write without X-Lease-Epoch with lease_not_held; memory facts need no lease', async () => {
    const r = await server.call('POST', '/v1/turns', { key, body: { role: 'user', content: 'no lease' } });
    assert.equal(r.status, 409);
    assert.equal(r.body.error.code, 'lease_not_held');
    const fact = await server.call('POST', '/v1/memories', {
      key,
      body: { subject: 'user', predicate: 'note', value: 'no lease needed' },
    });
    assert.equal(fact.status, 200, fact.text);
  });

  it('releases at once, and a re-acquire gets a higher epoch while the released one is lost', async () => {
    const first = await server.call('POST', '/v1/lease/acquire', { key, body: { holder: 'pod-a' } });
    const e1 = first.body.epoch as number;
    const rel = await server.call('POST', '/v1/lease/release', { key, body: { epoch: e1 } });
    assert.equal(rel.status, 200, rel.text);
    assert.equal(rel.body.held, false);
    assert.equal((await server.call('GET', '/v1/lease', { key })).body.held, false);
    const again = await server.call('POST', '/v1/lease/acquire', { key, body: { holder: 'pod-a' } });
    assert.ok(again.body.epoch > e1);
    const stale = await server.call('POST', '/v1/lease/renew', { key, body: { epoch: e1 } });
    assert.equal(stale.body.error.code, 'lease_lost');
    const renewed = await server.call('POST', '/v1/lease/renew', {
      key,
      body: { epoch: again.body.epoch, ttl_ms: 120_000 },
    });
    assert.equal(renewed.status, 200, renewed.text);
    assert.equal(Date.parse(renewed.body.expires_at), clock.now() + 120_000);
    await server.call('POST', '/v1/lease/release', { key, body: { epoch: again.body.epoch } });
  });

  it('gives exactly one of 200 concurrent acquires the lease', async () => {
    const k = await server.agentKey('agents', 'crowd', 86_400);
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        server.call('POST', '/v1/lease/acquire', { key: k, body: { holder: `pod-${i}` } }),
      ),
    );
    const won = answers.filter((r) => r.status === 200);
    assert.equal(won.length, 1);
    assert.ok(answers.filter((r) => r.status === 409).every((r) => r.body.error.code === 'lease_held'));
    const lease = await server.call('GET', '/v1/lease', { key: k });
    assert.equal(lease.body.holder, won[0]?.body.holder);
  });

  it('issues a higher epoch after a purge of the namespace than any before', async () => {
    const k = await server.agentKey('agents', 'purged', 86_400);
    const before = await server.call('POST', '/v1/lease/acquire', { key: k, body: {} });
    await server.call('POST', '/v1/turns', {
      key: k,
      headers: epochHeader(before.body.epoch),
      body: { role: 'user', content: 'to be purged' },
    });
    const purge = await server.call('DELETE', '/v1/namespaces/agents:purged', { key: server.adminKey });
    assert.equal(purge.status, 200, purge.text);
    assert.equal((await server.call('GET', '/v1/turns', { key: k })).body.total, 0);
    assert.equal((await server.call('GET', '/v1/lease', { key: k })).body.epoch, null);
    const after = await server.call('POST', '/v1/lease/acquire', { key: k, body: {} });
    assert.ok(after.body.epoch > before.body.epoch);
  });
});

describe('lease epochs across a restart', () => {
  it('issues a higher epoch after the server restarts on the same data than any before', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const first = await startTestMemoryServer({ clock });
    const key = await first.agentKey('agents', 'run-9', 86_400);
    const a = await first.call('POST', '/v1/lease/acquire', { key, body: { ttl_ms: 1000 } });
    await first.close(true);
    clock.advance(1000);
    const second = await startTestMemoryServer({ clock, dataDir: first.dataDir, adminKey: first.adminKey });
    try {
      const b = await second.call('POST', '/v1/lease/acquire', { key, body: {} });
      assert.equal(b.status, 200, b.text);
      assert.ok(b.body.epoch > a.body.epoch);
    } finally {
      await second.close();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});

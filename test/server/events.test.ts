import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

let srv: TestMemoryServer;
let key: string;
const marker = `zqx${Date.now().toString(36)}marker`;

before(async () => {
  srv = await startTestMemoryServer();
  key = await srv.agentKey('agents', 'run-1');
  const other = await srv.agentKey('agents', 'run-2');
  await srv.call('POST', '/v1/memories', {
    key,
    body: {
      statements: [
        { subject: `${marker} user`, predicate: 'prefers', value: `${marker} tea`, evidence: `said ${marker}` },
        { subject: 'user', predicate: 'lives_in', value: 'Oslo', observed_at: '2026-01-01T00:00:00Z' },
        { subject: 'user', predicate: 'lives_in', value: 'Bergen' },
      ],
    },
  });
  await srv.call('POST', '/v1/memories/forget', {
    key,
    body: { subject: 'user', predicate: 'lives_in', value: 'Bergen' },
  });
  await srv.call('POST', '/v1/memories', {
    key: other,
    body: { subject: 'keep', predicate: 'note', value: 'other namespace stays' },
  });
});
after(() => srv.close());

function filesContain(dir: string, needle: string): string[] {
  return readdirSync(dir).filter((f) => readFileSync(join(dir, f)).includes(needle));
}

describe('export -> purge -> import', () => {
  it('restores the identical history, ids included, and purge leaves no byte behind', async () => {
    const exported = await srv.call('GET', '/v1/events', { key });
    assert.equal(exported.status, 200);
    assert.match(exported.headers.get('content-type') ?? '', /application\/x-ndjson/);
    const lines = exported.text.trim().split('\n');
    assert.equal(lines.length, 5);
    // the tenant's registry versions come first, so an import restores the rules of their time
    assert.equal(JSON.parse(lines[0] as string).registry_version.tenant, 'agents');
    assert.ok(lines.slice(1).every((l) => JSON.parse(l).namespace === 'agents:run-1'));
    const historyBefore = await srv.call('GET', '/v1/memories/history?subject=user&predicate=lives_in', { key });

    const purge = await srv.call('DELETE', '/v1/namespaces/agents:run-1', { key: srv.adminKey });
    assert.deepEqual(purge.body, { namespace: 'agents:run-1', erased: 4 });
    assert.deepEqual(filesContain(srv.dataDir, marker), []);
    assert.equal((await srv.call('GET', '/v1/events', { key })).text, '');
    assert.deepEqual((await srv.call('GET', '/v1/memories?q=tea', { key })).body.beliefs, []);

    const other = await srv.call('GET', '/v1/memories?namespace=agents:run-2&subject=keep', { key: srv.adminKey });
    assert.equal(other.body.beliefs.length, 1);

    const imp = await srv.call('POST', '/v1/events/import', {
      key: srv.adminKey,
      body: exported.text,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.deepEqual(imp.body, { imported: 4, skipped: 0, registry_versions: 0, resume_records: 0 });
    assert.equal((await srv.call('GET', '/v1/events', { key })).text, exported.text);
    const historyAfter = await srv.call('GET', '/v1/memories/history?subject=user&predicate=lives_in', { key });
    assert.deepEqual(historyAfter.body, historyBefore.body);
    const again = await srv.call('POST', '/v1/events/import', {
      key: srv.adminKey,
      body: exported.text,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.deepEqual(again.body, { imported: 0, skipped: 4, registry_versions: 0, resume_records: 0 });
  });

  it('exports after an id with since', async () => {
    const all = (await srv.call('GET', '/v1/events', { key })).text.trim().split('\n');
    const first = JSON.parse(all[1] as string).id;
    const rest = (await srv.call('GET', `/v1/events?since=${first}`, { key })).text.trim().split('\n');
    assert.deepEqual(rest, [all[0], ...all.slice(2)]);
  });

  it('refuses import lines of another tenant with 403 and writes nothing', async () => {
    const minted = await srv.call('POST', '/v1/keys', { key: srv.adminKey, body: { tenant: 'agents' } });
    const line = JSON.parse((await srv.call('GET', '/v1/events', { key })).text.split('\n')[1] as string);
    const foreign = {
      ...line,
      id: 'ev_00000000000100000000000000',
      namespace: 'other:x',
      actor: { ...line.actor, tenant: 'other' },
    };
    const r = await srv.call('POST', '/v1/events/import', {
      key: minted.body.key,
      body: `${JSON.stringify(foreign)}\n`,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, 'namespace_mismatch');
  });

  it('names the bad line of an import', async () => {
    const r = await srv.call('POST', '/v1/events/import', {
      key: srv.adminKey,
      body: '{"id": 1}\n',
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(r.status, 400);
    assert.match(r.body.error.message, /^line 1/);
  });
});

describe('restart', () => {
  it('keeps data and keys across a restart of the server', async () => {
    const s1 = await startTestMemoryServer();
    const k = await s1.agentKey('agents', 'durable');
    await s1.call('POST', '/v1/memories', { key: k, body: { subject: 'user', predicate: 'name', value: 'Ada' } });
    await s1.running.close();
    const s2 = await startTestMemoryServer({ dataDir: s1.dataDir, adminKey: s1.adminKey });
    try {
      const r = await s2.call('GET', '/v1/memories?subject=user&predicate=name', { key: k });
      assert.equal(r.status, 200);
      assert.equal(r.body.beliefs[0].value, 'Ada');
    } finally {
      await s2.close();
      await s1.close();
    }
  });
});

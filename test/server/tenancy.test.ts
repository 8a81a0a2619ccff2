import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

let srv: TestMemoryServer;
let run1: string;
let adminA: string;

before(async () => {
  srv = await startTestMemoryServer();
  run1 = await srv.agentKey('agents', 'run-1');
  await srv.agentKey('agents', 'run-2');
  const minted = await srv.call('POST', '/v1/keys', { key: srv.adminKey, body: { tenant: 'agents' } });
  adminA = minted.body.key;
  await srv.call('POST', '/v1/memories', {
    key: run1,
    body: { subject: 'user', predicate: 'prefers', value: 'dark mode' },
  });
  await srv.call('POST', '/v1/memories', {
    key: srv.adminKey,
    body: { namespace: 'other:x', subject: 'user', predicate: 'prefers', value: 'light mode' },
  });
});
after(() => srv.close());

const read = (key: string, namespace?: string) =>
  srv.call('GET', `/v1/memories?subject=user${namespace ? `&namespace=${encodeURIComponent(namespace)}` : ''}`, {
    key,
  });

describe('tenancy matrix', () => {
  const cases: {
    who: string;
    key: () => string;
    ns: string | undefined;
    status: number;
    code?: string;
    value?: string;
  }[] = [
    { who: 'agent key, own namespace by default', key: () => run1, ns: undefined, status: 200, value: 'dark mode' },
    { who: 'agent key, own namespace named', key: () => run1, ns: 'agents:run-1', status: 200, value: 'dark mode' },
    { who: 'agent key, another agent', key: () => run1, ns: 'agents:run-2', status: 403, code: 'namespace_mismatch' },
    { who: 'agent key, another tenant', key: () => run1, ns: 'other:x', status: 403, code: 'namespace_mismatch' },
    {
      who: 'admin of tenant agents, its tenant',
      key: () => adminA,
      ns: 'agents:run-1',
      status: 200,
      value: 'dark mode',
    },
    {
      who: 'admin of tenant agents, tenant other',
      key: () => adminA,
      ns: 'other:x',
      status: 403,
      code: 'namespace_mismatch',
    },
    { who: 'admin of *, any tenant', key: () => srv.adminKey, ns: 'other:x', status: 200, value: 'light mode' },
    { who: 'admin naming no namespace', key: () => adminA, ns: undefined, status: 400, code: 'invalid_request' },
  ];
  for (const c of cases) {
    it(`${c.who} -> ${c.status}${c.code ? ` ${c.code}` : ''}`, async () => {
      const r = await read(c.key(), c.ns);
      assert.equal(r.status, c.status, r.text);
      if (c.code) assert.equal(r.body.error.code, c.code);
      if (c.value)
        assert.deepEqual(
          r.body.beliefs.map((b: { value: string }) => b.value),
          [c.value],
        );
    });
  }

  it('refuses writes, forget, history and export into another namespace with namespace_mismatch', async () => {
    const calls = [
      srv.call('POST', '/v1/memories', {
        key: run1,
        body: { namespace: 'agents:run-2', subject: 'a', predicate: 'note', value: 'x' },
      }),
      srv.call('POST', '/v1/memories/forget', {
        key: run1,
        body: { namespace: 'agents:run-2', subject: 'user', predicate: 'prefers' },
      }),
      srv.call('GET', '/v1/memories/history?namespace=agents:run-2&subject=user&predicate=prefers', { key: run1 }),
      srv.call('GET', '/v1/events?namespace=agents:run-2', { key: run1 }),
    ];
    for (const r of await Promise.all(calls)) {
      assert.equal(r.status, 403, r.text);
      assert.equal(r.body.error.code, 'namespace_mismatch');
    }
  });

  it('refuses admin routes to an agent key with 403 forbidden', async () => {
    const calls = [
      srv.call('POST', '/v1/keys', { key: run1, body: { tenant: 'agents', agent: 'run-9' } }),
      srv.call('GET', '/v1/keys', { key: run1 }),
      srv.call('DELETE', '/v1/namespaces/agents:run-1', { key: run1 }),
      srv.call('POST', '/v1/events/import', {
        key: run1,
        body: '',
        headers: { 'content-type': 'application/x-ndjson' },
      }),
    ];
    for (const r of await Promise.all(calls)) {
      assert.equal(r.status, 403, r.text);
      assert.equal(r.body.error.code, 'forbidden');
    }
  });

  it('keeps a tenant admin from minting keys for another tenant', async () => {
    const r = await srv.call('POST', '/v1/keys', { key: adminA, body: { tenant: 'other', agent: 'x' } });
    assert.equal(r.status, 403);
  });

  it('lists only the tenant admin’s own keys, never secrets', async () => {
    const r = await srv.call('GET', '/v1/keys', { key: adminA });
    assert.equal(r.status, 200);
    assert.ok(r.body.keys.length >= 3);
    assert.ok(r.body.keys.every((k: { tenant: string }) => k.tenant === 'agents'));
    assert.ok(!r.text.includes(run1.slice(21)));
    assert.ok(!('hash' in r.body.keys[0]));
  });
});

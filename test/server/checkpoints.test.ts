/**
 * The checkpoint routes (`/v1/checkpoints…`) through `inject()`: the wire shape of a put and a read,
 * fencing (no epoch: 409 lease_not_held; a stale one: 409 lease_lost; nothing stored), another agent's
 * namespace (403), and bad input answered 400 naming the field, never a 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const serialized = (s: string) => ({ type: 'json', data: b64(s) });

describe('checkpoint routes', () => {
  let server: TestMemoryServer;
  let app: FastifyInstance;
  let key: string;
  let epoch: string;
  before(async () => {
    server = await startTestMemoryServer();
    app = server.running.server.app;
    key = await server.agentKey('agents', 'graph-1');
    const lease = await server.call('POST', '/v1/lease/acquire', { key, body: { ttl_ms: 3_600_000 } });
    epoch = String(lease.body.epoch);
  });
  after(() => server.close());

  const send = (
    method: 'GET' | 'PUT' | 'POST' | 'DELETE',
    url: string,
    payload?: unknown,
    h: Record<string, string> = {},
  ) =>
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${key}`, 'x-lease-epoch': epoch, ...h },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  const put = {
    thread_id: 'thread-1',
    checkpoint_ns: '',
    checkpoint_id: 'c-1',
    checkpoint: serialized('{"v":4}'),
    metadata: serialized('{"step":0}'),
  };

  it('stores a checkpoint and reads it back with its pending writes', async () => {
    const r = await send('PUT', '/v1/checkpoints', put);
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.json().epoch, Number(epoch));
    const w = await send('POST', '/v1/checkpoints/writes', {
      thread_id: 'thread-1',
      checkpoint_ns: '',
      checkpoint_id: 'c-1',
      task_id: 'task',
      writes: [{ idx: 0, channel: 'animals', value: serialized('"dog"') }],
    });
    assert.deepEqual(w.json(), { stored: 1 });
    const got = await send('GET', '/v1/checkpoints?thread_id=thread-1&checkpoint_ns=');
    const [c] = got.json().checkpoints;
    assert.equal(got.json().next_cursor, null);
    assert.deepEqual(
      { ...c, at: undefined },
      {
        ...put,
        parent_checkpoint_id: null,
        pending_writes: [{ task_id: 'task', idx: 0, channel: 'animals', value: serialized('"dog"'), task_path: '' }],
        at: undefined,
      },
    );
  });

  it('refuses a write without an epoch (lease_not_held) or with a stale one (lease_lost), storing nothing', async () => {
    const other = await server.agentKey('agents', 'graph-2');
    const noEpoch = await app.inject({
      method: 'PUT',
      url: '/v1/checkpoints',
      headers: { authorization: `Bearer ${other}` },
      payload: put,
    });
    assert.equal(noEpoch.statusCode, 409);
    assert.equal(noEpoch.json().error.code, 'lease_not_held');
    const first = await server.call('POST', '/v1/lease/acquire', { key: other, body: { ttl_ms: 1000 } });
    await server.call('POST', '/v1/lease/release', { key: other, body: { epoch: first.body.epoch } });
    await server.call('POST', '/v1/lease/acquire', { key: other, body: { ttl_ms: 60_000 } });
    const stale = await app.inject({
      method: 'PUT',
      url: '/v1/checkpoints',
      headers: { authorization: `Bearer ${other}`, 'x-lease-epoch': String(first.body.epoch) },
      payload: put,
    });
    assert.equal(stale.statusCode, 409);
    assert.equal(stale.json().error.code, 'lease_lost');
    const read = await app.inject({
      method: 'GET',
      url: '/v1/checkpoints',
      headers: { authorization: `Bearer ${other}` },
    });
    assert.deepEqual(read.json().checkpoints, []);
  });

  it("refuses another agent's namespace with 403", async () => {
    const r = await send('GET', '/v1/checkpoints?namespace=agents:someone-else');
    assert.equal(r.statusCode, 403);
    assert.equal(r.json().error.code, 'namespace_mismatch');
  });

  const bad: { name: string; method: 'GET' | 'PUT' | 'POST' | 'DELETE'; url: string; body?: unknown; field: RegExp }[] =
    [
      {
        name: 'a missing thread_id',
        method: 'PUT',
        url: '/v1/checkpoints',
        body: { ...put, thread_id: undefined },
        field: /^thread_id$/,
      },
      {
        name: 'a thread_id with NUL',
        method: 'PUT',
        url: '/v1/checkpoints',
        body: { ...put, thread_id: 'a\u0000b' },
        field: /^thread_id$/,
      },
      {
        name: 'data that is not base64',
        method: 'PUT',
        url: '/v1/checkpoints',
        body: { ...put, checkpoint: { type: 'json', data: '{not base64}' } },
        field: /^checkpoint\.data$/,
      },
      {
        name: 'an unknown field',
        method: 'PUT',
        url: '/v1/checkpoints',
        body: { ...put, channel_values: {} },
        field: /^channel_values$/,
      },
      {
        name: 'a write index that is not an integer',
        method: 'POST',
        url: '/v1/checkpoints/writes',
        body: {
          ...put,
          task_id: 't',
          writes: [{ idx: 0.5, channel: 'c', value: serialized('1') }],
          checkpoint: undefined,
          metadata: undefined,
        },
        field: /^writes\[0\]\.idx$/,
      },
      { name: 'a cursor no page gave', method: 'GET', url: '/v1/checkpoints?cursor=bm9wZQ', field: /^cursor$/ },
      { name: 'a limit above 100', method: 'GET', url: '/v1/checkpoints?limit=101', field: /^limit$/ },
      { name: 'a thread deletion without thread_id', method: 'DELETE', url: '/v1/checkpoints', field: /^thread_id$/ },
    ];
  for (const c of bad) {
    it(`answers 400 naming the field for ${c.name}`, async () => {
      const r = await send(c.method, c.url, c.body);
      assert.equal(r.statusCode, 400, r.body);
      assert.equal(r.json().error.code, 'invalid_request');
      assert.match(r.json().error.message.split(':')[0], c.field, r.json().error.message);
    });
  }

  it('deletes a thread under the lease', async () => {
    const r = await send('DELETE', '/v1/checkpoints?thread_id=thread-1');
    assert.deepEqual(r.json(), { thread_id: 'thread-1', deleted: 2 });
    assert.deepEqual((await send('GET', '/v1/checkpoints')).json().checkpoints, []);
  });
});

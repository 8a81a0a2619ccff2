/**
 * Bad input to the resume and lease routes: unknown fields, wrong types, over-long strings, an epoch
 * that is not an integer (header or body), a ttl_ms out of range (the range named), a budget below
 * the minimum: 400 naming the field, nothing stored, never a 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestMemoryServer, type TestMemoryServer } from '../../helpers/memory-server.ts';

describe('resume routes refuse bad input', () => {
  let server: TestMemoryServer;
  let key: string;
  let headers: Record<string, string>;
  before(async () => {
    server = await startTestMemoryServer();
    key = await server.agentKey('agents', 'run-1');
    const lease = await server.call('POST', '/v1/lease/acquire', { key, body: { ttl_ms: 3_600_000 } });
    headers = { 'x-lease-epoch': String(lease.body.epoch) };
  });
  after(() => server.close());

  const cases: { name: string; method: string; path: string; body?: unknown; field: RegExp; epoch?: string }[] = [
    {
      name: 'an unknown working-state field',
      method: 'PATCH',
      path: '/v1/working-state',
      body: { goal: 'g', mood: 'x' },
      field: /^mood$/,
    },
    {
      name: 'version is not writable',
      method: 'PATCH',
      path: '/v1/working-state',
      body: { version: 3 },
      field: /^version$/,
    },
    {
      name: 'a plan that is not a list',
      method: 'PATCH',
      path: '/v1/working-state',
      body: { plan: 'do it' },
      field: /^plan$/,
    },
    {
      name: 'an over-long goal',
      method: 'PATCH',
      path: '/v1/working-state',
      body: { goal: 'g'.repeat(2001) },
      field: /^goal$/,
    },
    {
      name: 'a step that is not an integer',
      method: 'PATCH',
      path: '/v1/working-state',
      body: { step: 1.5 },
      field: /^step$/,
    },
    {
      name: 'a turn role outside the enum',
      method: 'POST',
      path: '/v1/turns',
      body: { role: 'bot', content: 'x' },
      field: /^role$/,
    },
    { name: 'a turn without content', method: 'POST', path: '/v1/turns', body: { role: 'user' }, field: /^content$/ },
    {
      name: 'a milestone without a name',
      method: 'POST',
      path: '/v1/milestones',
      body: { progress: 'x' },
      field: /^name$/,
    },
    {
      name: 'a pointer type outside the enum',
      method: 'PUT',
      path: '/v1/pointers/p',
      body: { type: 'url', fields: {} },
      field: /^type$/,
    },
    {
      name: 'a pointer field that is not text',
      method: 'PUT',
      path: '/v1/pointers/p',
      body: { type: 'env', fields: { A: 1 } },
      field: /^fields\.A$/,
    },
    {
      name: 'a pointer name with a slash-like character',
      method: 'PUT',
      path: '/v1/pointers/a%20b',
      body: { type: 'env', fields: {} },
      field: /^name$/,
    },
    {
      name: 'an epoch header that is not an integer',
      method: 'POST',
      path: '/v1/turns',
      body: { role: 'user', content: 'x' },
      field: /^x-lease-epoch$/i,
      epoch: '1.5',
    },
    {
      name: 'an epoch header that is text',
      method: 'PATCH',
      path: '/v1/working-state',
      body: { goal: 'g' },
      field: /^x-lease-epoch$/i,
      epoch: 'abc',
    },
    {
      name: 'a renew epoch that is not an integer',
      method: 'POST',
      path: '/v1/lease/renew',
      body: { epoch: 'one' },
      field: /^epoch$/,
    },
    {
      name: 'a release epoch that is fractional',
      method: 'POST',
      path: '/v1/lease/release',
      body: { epoch: 2.5 },
      field: /^epoch$/,
    },
    {
      name: 'a ttl_ms below the range',
      method: 'POST',
      path: '/v1/lease/acquire',
      body: { ttl_ms: 10 },
      field: /^ttl_ms$/,
    },
    {
      name: 'a lease_ttl_ms above the range',
      method: 'POST',
      path: '/v1/resume',
      body: { lease_ttl_ms: 3_600_001 },
      field: /^lease_ttl_ms$/,
    },
    {
      name: 'a budget below the minimum',
      method: 'POST',
      path: '/v1/resume',
      body: { token_budget: 10 },
      field: /^token_budget$/,
    },
    {
      name: 'a budget that is not an integer',
      method: 'POST',
      path: '/v1/resume',
      body: { token_budget: 1000.5 },
      field: /^token_budget$/,
    },
    { name: 'an unknown resume field', method: 'POST', path: '/v1/resume', body: { budget: 1000 }, field: /^budget$/ },
    {
      name: 'an output whose content is not text',
      method: 'POST',
      path: '/v1/outputs',
      body: { content: 5 },
      field: /^content$/,
    },
    { name: 'a turns limit that is not a number', method: 'GET', path: '/v1/turns?limit=lots', field: /^limit$/ },
    {
      name: 'a history limit above the range',
      method: 'GET',
      path: '/v1/working-state/history?limit=1000',
      field: /^limit$/,
    },
  ];

  for (const c of cases) {
    it(`answers 400 naming the field for ${c.name}`, async () => {
      const h = c.epoch ? { 'x-lease-epoch': c.epoch } : headers;
      const r = await server.call(c.method, c.path, { key, headers: h, body: c.body });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, 'invalid_request');
      const field = r.body.error.message.split(':')[0];
      assert.match(field, c.field, r.body.error.message);
    });
  }

  it('says the ttl range and the budget range in the message', async () => {
    const r = await server.call('POST', '/v1/lease/acquire', { key, body: { ttl_ms: 10 } });
    assert.match(r.body.error.message, /1000 to 3600000/);
    const b = await server.call('POST', '/v1/resume', { key, body: { token_budget: 499 } });
    assert.match(b.body.error.message, /^token_budget: .*500 to 200000/);
  });

  it('stored nothing from any refused request', async () => {
    assert.equal((await server.call('GET', '/v1/working-state', { key })).body.version, 0);
    assert.equal((await server.call('GET', '/v1/turns', { key })).body.total, 0);
    assert.deepEqual((await server.call('GET', '/v1/pointers', { key })).body.pointers, []);
    assert.deepEqual((await server.call('GET', '/v1/milestones', { key })).body.milestones, []);
    assert.deepEqual((await server.call('GET', '/v1/outputs', { key })).body.outputs, []);
    const lease = await server.call('GET', '/v1/lease', { key });
    assert.equal(String(lease.body.epoch), headers['x-lease-epoch'], 'no refused resume or acquire took a lease');
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

let srv: TestMemoryServer;
let key: string;

before(async () => {
  srv = await startTestMemoryServer();
  key = await srv.agentKey('agents', 'bad');
  await srv.call('POST', '/v1/memories', { key, body: { subject: 'keep', predicate: 'lives_in', value: 'Oslo' } });
});
after(() => srv.close());

async function exportText(): Promise<string> {
  return (await srv.call('GET', '/v1/events', { key })).text;
}

describe('bad input', () => {
  const big = 'x'.repeat(9000);
  const cases: { name: string; body: unknown; status: number; field: RegExp; contentType?: string }[] = [
    {
      name: 'unknown predicate lists close names',
      body: { subject: 's', predicate: 'lives_inn', value: 'x' },
      status: 400,
      field: /^predicate: .*'lives_in'/,
    },
    {
      name: 'wrong value type',
      body: { subject: 's', predicate: 'birthday', value: 12 },
      status: 400,
      field: /^value: 'birthday' takes a date/,
    },
    {
      name: 'value not a scalar',
      body: { subject: 's', predicate: 'lives_in', value: { a: 1 } },
      status: 400,
      field: /^value:/,
    },
    {
      name: 'observed_at far in the future',
      body: { subject: 's', predicate: 'lives_in', value: 'x', observed_at: Date.now() + 3_600_000 },
      status: 400,
      field: /^observed_at: .*future/,
    },
    {
      name: 'observed_at not a time',
      body: { subject: 's', predicate: 'lives_in', value: 'x', observed_at: 'yesterday' },
      status: 400,
      field: /^observed_at:/,
    },
    {
      name: 'observed_at on a day the calendar does not have',
      body: { subject: 's', predicate: 'lives_in', value: 'x', observed_at: '2026-02-30T12:00:00Z' },
      status: 400,
      field: /^observed_at: 2026-02-30 is not a calendar date/,
    },
    {
      name: 'confidence above 1',
      body: { subject: 's', predicate: 'lives_in', value: 'x', confidence: 2 },
      status: 400,
      field: /^confidence:/,
    },
    {
      name: 'oversize string value',
      body: { subject: 's', predicate: 'note', value: big },
      status: 400,
      field: /^value:/,
    },
    {
      name: 'oversize subject',
      body: { subject: big.slice(0, 300), predicate: 'note', value: 'x' },
      status: 400,
      field: /^subject:/,
    },
    { name: 'missing subject', body: { predicate: 'note', value: 'x' }, status: 400, field: /^subject:/ },
    {
      name: 'unknown field',
      body: { subject: 's', predicate: 'note', value: 'x', colour: 'red' },
      status: 400,
      field: /^colour: unknown field/,
    },
    {
      name: 'unknown field in a batch',
      body: { statements: [{ subject: 's', predicate: 'note', value: 'x', zz: 1 }] },
      status: 400,
      field: /^statements\[0\]\.zz: unknown field/,
    },
    { name: 'empty batch', body: { statements: [] }, status: 400, field: /^statements:/ },
    { name: 'malformed JSON', body: '{"subject": ', status: 400, field: /^body:/ },
    { name: 'not JSON at all', body: 'subject=s', status: 400, field: /^body:/, contentType: 'text/plain' },
  ];
  for (const c of cases) {
    it(`${c.name} -> ${c.status} naming the field, nothing stored`, async () => {
      const before = await exportText();
      const r = await srv.call('POST', '/v1/memories', {
        key,
        body: c.body,
        ...(c.contentType ? { headers: { 'content-type': c.contentType } } : {}),
      });
      assert.equal(r.status, c.status, r.text);
      assert.equal(r.body.error.code, 'invalid_request');
      assert.match(r.body.error.message, c.field);
      assert.equal(await exportText(), before);
    });
  }

  it('enum value not allowed names the allowed values', async () => {
    const admin = srv.adminKey;
    await srv.call('PUT', '/v1/registry', {
      key: admin,
      body: {
        tenant: 'enumt',
        predicates: [{ name: 'tier', cardinality: 'single', value_type: 'enum', allowed: ['free', 'pro'] }],
      },
    });
    const k = await srv.agentKey('enumt', 'a');
    const r = await srv.call('POST', '/v1/memories', {
      key: k,
      body: { subject: 's', predicate: 'tier', value: 'gold' },
    });
    assert.equal(r.status, 400);
    assert.match(r.body.error.message, /^value: 'gold' is not allowed for 'tier'; allowed: free, pro/);
    const ok = await srv.call('POST', '/v1/memories', {
      key: k,
      body: { subject: 's', predicate: 'tier', value: 'PRO' },
    });
    assert.equal(ok.body.event.value, 'pro');
  });

  it('a body over 1 MiB -> 413 too_large', async () => {
    const r = await srv.call('POST', '/v1/memories', {
      key,
      body: JSON.stringify({ subject: 's', predicate: 'note', value: 'y'.repeat(1_100_000) }),
    });
    assert.equal(r.status, 413);
    assert.equal(r.body.error.code, 'too_large');
  });

  it('bad query parameters name the parameter', async () => {
    const cases: [string, RegExp][] = [
      ['limit=0', /^limit:/],
      ['limit=abc', /^limit:/],
      ['as_of=soon', /^as_of:/],
      ['as_of=2026-04-31T00:00:00Z', /^as_of: 2026-04-31 is not a calendar date/],
      ['as_of=2025-02-29', /^as_of: 2025-02-29 is not a calendar date/],
      ['min_confidence=7', /^min_confidence:/],
      ['min_confidence=2e0', /^min_confidence:/],
      ['min_confidence=-0.1', /^min_confidence:/],
      ['min_confidence=0x1', /^min_confidence:/],
      ['q=%20%21%21', /^q:/],
      ['bogus=1', /^bogus: unknown field/],
      ['namespace=nocolon', /^namespace:/],
    ];
    for (const [query, field] of cases) {
      const r = await srv.call('GET', `/v1/memories?${query}`, { key });
      assert.equal(r.status, 400, `${query}: ${r.text}`);
      assert.match(r.body.error.message, field, query);
    }
  });

  it('answers unknown routes with 404 not_found and never a stack trace', async () => {
    const r = await srv.call('GET', '/v1/nope', { key });
    assert.equal(r.status, 404);
    assert.equal(r.body.error.code, 'not_found');
    assert.ok(!r.text.includes('at '));
  });

  it('kept the earlier fact through all of it', async () => {
    const r = await srv.call('GET', '/v1/memories?subject=keep&predicate=lives_in', { key });
    assert.equal(r.body.beliefs[0].value, 'Oslo');
  });
});

describe('requests refused before their body is read', () => {
  it('answers 401 to a caller without a key, whatever the body', async () => {
    for (const body of ['{bad', JSON.stringify({ subject: 's', predicate: 'note', value: 'x'.repeat(1_100_000) })]) {
      const r = await srv.call('POST', '/v1/memories', { body });
      assert.equal(r.status, 401, r.text.slice(0, 200));
      assert.equal(r.body.error.code, 'unauthenticated');
    }
  });

  it('answers a malformed URL with 400 invalid_request naming the url', async () => {
    const r = await srv.call('DELETE', '/v1/keys/%E0%A4%A', { key: srv.adminKey });
    assert.equal(r.status, 400);
    assert.deepEqual(Object.keys(r.body), ['error']);
    assert.equal(r.body.error.code, 'invalid_request');
    assert.match(r.body.error.message, /^url:/);
  });
});

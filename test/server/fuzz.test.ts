/**
 * Seeded fuzz of every memory server route: random methods, mangled paths and queries, headers,
 * bodies and framing, sent as raw bytes. No answer may be a 5xx other than 503, and the server must
 * still answer afterwards; every refusal has the wire error shape. A failure names the seed and the case index (the cases are reproducible).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FuzzTarget, fuzzCases, sendRaw } from '../helpers/fuzz.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

let srv: TestMemoryServer;
let agentKey: string;
before(async () => {
  srv = await startTestMemoryServer();
  agentKey = await srv.agentKey('fuzz', 'a');
  await srv.call('POST', '/v1/memories', {
    key: agentKey,
    body: { subject: 'user', predicate: 'lives_in', value: 'Oslo' },
  });
});
after(() => srv.close());

const statement = {
  subject: 'user',
  predicate: 'lives_in',
  value: 'Rome',
  observed_at: '2026-01-01T00:00:00Z',
  confidence: 0.5,
};
const target = (key: string): FuzzTarget => ({
  paths: [
    '/v1/memories',
    '/v1/memories?subject={x}&predicate=lives_in',
    '/v1/memories?q={x}&as_of={x}&limit={x}',
    '/v1/memories/history?subject={x}&predicate={x}',
    '/v1/memories/forget',
    '/v1/registry',
    '/v1/registry?tenant={x}',
    '/v1/events',
    '/v1/events?namespace={x}&since={x}',
    '/v1/events/import',
    '/v1/namespaces/{x}',
    '/v1/keys',
    '/v1/keys/{x}',
    '/v1/whoami',
    '/v1/auth/kubernetes',
    '/mcp',
    '/metrics',
    '/healthz',
    '/openapi.json',
    '/{x}',
  ],
  goodHeaders: { authorization: `Bearer ${key}` },
  bodies: [
    statement,
    { namespace: 'fuzz:a', statements: [statement, statement] },
    { subject: 'user', predicate: 'lives_in' },
    { tenant: 'fuzz', agent: 'b', ttl_seconds: 60 },
    { tenant: 'fuzz', predicates: [{ name: 'x', cardinality: 'single', value_type: 'string' }] },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'remember', arguments: statement } },
    { token: 'a.b.c' },
  ],
});

describe('fuzz: the memory server under random requests', () => {
  for (const [who, seed] of [
    ['an agent key', 4242],
    ['the * admin key', 777],
  ] as const) {
    it(`answers 500 seeded random requests with ${who} with no 5xx but 503, and stays up`, async () => {
      const key = who === 'an agent key' ? agentKey : srv.adminKey;
      const port = Number(new URL(srv.url).port);
      const statuses = new Map<number, number>();
      for (const [i, c] of fuzzCases(seed, 500, target(key)).entries()) {
        const { status, text, body: answer } = await sendRaw(port, c);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status >= 400 && !c.toString('latin1').startsWith('HEAD ')) {
          // every refusal (a HEAD answer has no body), also the framework's and the parser's, has the wire error shape
          const body = JSON.parse(answer || 'null');
          assert.ok(
            typeof body?.error?.code === 'string' && typeof body.error.message === 'string',
            `case ${i} of seed ${seed}: ${status} ${text.slice(0, 300)}`,
          );
        }
        assert.ok(
          status < 500 || status === 503,
          `case ${i} of seed ${seed} got ${status}: ${c.toString('latin1').slice(0, 300)}`,
        );
      }
      // the cases reach the routes, not only the parser's refusals (fewer answer 200 since an unknown query
      // parameter, which the fuzzer adds to 30% of its paths, is refused with 400)
      assert.ok((statuses.get(200) ?? 0) >= 5 && (statuses.get(400) ?? 0) > 10, JSON.stringify([...statuses]));
      assert.equal((await srv.call('GET', '/v1/whoami', { key: agentKey })).status, 200);
    });
  }
});

/**
 * Text no store can keep the same is refused at the edge with 400 naming the field, on SQLite and on
 * PostgreSQL alike: U+0000 (PostgreSQL text cannot hold it; it was a 500 there, and failed every
 * write of its group commit) in a body, a query, an MCP tool call and an import line. (Lone
 * surrogates: `wire-hardening.test.ts`.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mintAgentKey, newAdminKey, type Replica, startReplica } from '../helpers/memory-replicas.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

/** A server under test: its URL, admin key and a way to mint agent keys. */
interface Target {
  url: string;
  admin: string;
  agentKey(tenant: string, agent: string): Promise<string>;
}

/** Calls `target`; objects are sent as JSON, strings as NDJSON. */
async function send(target: Target, method: string, path: string, key: string, body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (typeof body === 'string') headers['content-type'] = 'application/x-ndjson';
  else if (body !== undefined) headers['content-type'] = 'application/json';
  if (path === '/mcp') headers.accept = 'application/json, text/event-stream';
  const res = await fetch(`${target.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any = text;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, body: json };
}

const NUL = /contains U\+0000 \(NUL\), which cannot be stored/;

/** The NUL checks, run against one store. */
function nulRefusals(name: string, open: () => Promise<Target>, close: () => Promise<void>): void {
  describe(`U+0000 in text (${name})`, () => {
    let target: Target;
    let key: string;
    let tenant: string;
    before(async () => {
      target = await open();
      tenant = `nul${Date.now().toString(36)}`;
      key = await target.agentKey(tenant, 'a');
    });
    after(close);

    it('refuses it in each field of a remember with 400 naming the field, storing nothing', async () => {
      for (const field of ['subject', 'value', 'evidence', 'source', 'kind']) {
        const body = { subject: 'user', predicate: 'note', value: 'ok', [field]: 'x\u0000y' };
        const r = await send(target, 'POST', '/v1/memories', key, body);
        assert.equal(r.status, 400, `${field}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error.code, 'invalid_request');
        assert.equal(r.body.error.message.split(':')[0], field);
        assert.match(r.body.error.message, NUL);
      }
      const batch = await send(target, 'POST', '/v1/memories', key, {
        statements: [
          { subject: 'user', predicate: 'note', value: 'fine' },
          { subject: 'user', predicate: 'note', value: 'bad', evidence: '\u0000' },
        ],
      });
      assert.equal(batch.status, 400);
      assert.match(batch.body.error.message, /^statements\[1\]\.evidence: /);
      const held = await send(target, 'GET', '/v1/memories?subject=user', key);
      assert.deepEqual(held.body.beliefs, []);
    });

    it('refuses it in a query parameter and a path parameter', async () => {
      const q = await send(target, 'GET', '/v1/memories?subject=us%00er', key);
      assert.equal(q.status, 400, JSON.stringify(q.body));
      assert.match(q.body.error.message, /^subject: contains U\+0000/);
      const h = await send(target, 'GET', '/v1/memories/history?subject=user&predicate=no%00te', key);
      assert.equal(h.status, 400);
      assert.match(h.body.error.message, /^predicate: /);
      const p = await send(target, 'DELETE', '/v1/pointers/a%00b', key);
      assert.equal(p.status, 400, JSON.stringify(p.body));
    });

    it('refuses it in an MCP tool call', async () => {
      const call = {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'remember', arguments: { subject: 'user', predicate: 'note', value: 'a\u0000b' } },
      };
      const r = await send(target, 'POST', '/mcp', key, call);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.match(r.body.error.message, /^params\.arguments\.value: contains U\+0000/);
    });

    it('refuses an import line holding it, naming the line and field, importing none of the body', async () => {
      const event = (id: string, evidence: string | null) =>
        JSON.stringify({
          id,
          namespace: `${tenant}:a`,
          subject: 'user',
          predicate: 'note',
          value: `v ${id}`,
          value_key: `v ${id}`,
          retraction: false,
          kind: null,
          confidence: 1,
          source: null,
          evidence,
          observed_at: '2026-01-01T00:00:00.000Z',
          recorded_at: '2026-01-01T00:00:00.000Z',
          actor: { tenant, agent: 'a', session: null, key_id: null },
        });
      const body = `${event('ev_01a232f3c3600000002ac07d91', null)}\n${event('ev_01a232f3c3600000002ac07d92', 'x\u0000')}\n`;
      const r = await send(target, 'POST', '/v1/events/import', target.admin, body);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.match(r.body.error.message, /^line 2\.evidence: contains U\+0000/);
      const events = await send(target, 'GET', `/v1/events?namespace=${tenant}:a`, target.admin);
      assert.ok(!String(events.body).includes('ev_01a232f3c3600000002ac07d91'));
    });

    it('writes the other requests of a group commit while refusing one with NUL', async () => {
      const other = await target.agentKey(`${tenant}x`, 'v');
      const writes = Array.from({ length: 10 }, (_, i) =>
        send(target, 'POST', '/v1/memories', other, { subject: 'user', predicate: 'note', value: `victim ${i}` }),
      );
      const bad = send(target, 'POST', '/v1/memories', key, {
        subject: 'x',
        predicate: 'note',
        value: 'v',
        evidence: 'a\u0000b',
      });
      assert.equal((await bad).status, 400);
      assert.deepEqual(
        (await Promise.all(writes)).map((w) => w.status),
        writes.map(() => 200),
      );
    });
  });
}

let sqlite: TestMemoryServer;
nulRefusals(
  'SQLite',
  async () => {
    sqlite = await startTestMemoryServer();
    return { url: sqlite.url, admin: sqlite.adminKey, agentKey: (t, a) => sqlite.agentKey(t, a) };
  },
  () => sqlite.close(),
);

let pg: TestPostgres;
let replica: Replica;
nulRefusals(
  'PostgreSQL',
  async () => {
    pg = await startPostgres();
    const admin = newAdminKey();
    replica = await startReplica(await pg.createDatabase(), admin);
    return { url: replica.url, admin, agentKey: (t, a) => mintAgentKey(replica, admin, t, a) };
  },
  async () => {
    await replica?.stop();
    await pg?.stop();
  },
);

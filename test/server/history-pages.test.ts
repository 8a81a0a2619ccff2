/**
 * History is paged (issue 21, point 2): `GET /v1/memories/history` and the MCP `memory_history` tool
 * answer at most `limit` events (default 100, at most 1000) and a `next` cursor; the pages chain to
 * the end with no gap or duplicate, in fold order; a bad limit or cursor is a 400 naming the field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

let srv: TestMemoryServer;
let key: string;
/** Every event of acme-notes' `note`, as written (ids), in the order history must give them. */
let all: string[] = [];

interface EventLine {
  id: string;
  observed_at: string;
  retraction: boolean;
}

const history = (query: string) => srv.call('GET', `/v1/memories/history?${query}`, { key });

before(async () => {
  srv = await startTestMemoryServer();
  key = await srv.agentKey('hist', 'run-1');
  // 1,200 values in two batches (each batch shares one observed_at: ties broken by id), then
  // back-dated ones that sort before them, and a retraction: fold order is not insertion order.
  for (const b of [0, 1]) {
    const statements = Array.from({ length: 600 }, (_, i) => ({
      subject: 'proj',
      predicate: 'note',
      value: `n${b}-${i}`,
    }));
    const r = await srv.call('POST', '/v1/memories', { key, body: { statements } });
    assert.equal(r.status, 200, r.text);
  }
  for (const [i, at] of ['2026-01-03T00:00:00Z', '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z'].entries()) {
    await srv.call('POST', '/v1/memories', {
      key,
      body: { subject: 'proj', predicate: 'note', value: `old${i}`, observed_at: at },
    });
  }
  await srv.call('POST', '/v1/memories/forget', { key, body: { subject: 'proj', predicate: 'note', value: 'n0-7' } });
  const exported = await srv.call('GET', '/v1/events', { key });
  const events = exported.text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((e) => e.subject === 'proj') as EventLine[];
  const order = (a: EventLine, b: EventLine) =>
    Date.parse(a.observed_at) - Date.parse(b.observed_at) ||
    Number(a.retraction) - Number(b.retraction) ||
    (a.id < b.id ? -1 : 1);
  all = events.sort(order).map((e) => e.id);
  assert.equal(all.length, 1204);
});
after(() => srv.close());

/** Follows `next` from the first page; returns the pages' ids. */
async function chain(first: string, page: (cursor?: string) => Promise<{ events: EventLine[]; next: string | null }>) {
  const pages: string[][] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 1000; guard++) {
    const p = await page(cursor);
    pages.push(p.events.map((e) => e.id));
    if (p.next === null) return pages;
    cursor = p.next;
  }
  throw new Error(`${first}: pages never ended`);
}

describe('GET /v1/memories/history pages', () => {
  it('answers 100 events by default and a next cursor', async () => {
    const r = await history('subject=proj&predicate=note');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.events.length, 100);
    assert.equal(typeof r.body.next, 'string');
    assert.deepEqual(
      r.body.events.map((e: EventLine) => e.id),
      all.slice(0, 100),
    );
  });

  it('chains pages to the end with no gap or duplicate, at any page size', async () => {
    for (const limit of [1000, 333, 7]) {
      const pages = await chain(`limit ${limit}`, async (cursor) => {
        const r = await history(
          `subject=proj&predicate=note&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        assert.equal(r.status, 200, r.text);
        return r.body;
      });
      for (const p of pages) assert.ok(p.length <= limit);
      assert.deepEqual(pages.flat(), all, `limit ${limit}`);
      assert.equal(pages.length, Math.ceil(all.length / limit));
    }
  });

  it('ends with next null, also for a fact with no events', async () => {
    const r = await history('subject=nobody&predicate=note&limit=5');
    assert.deepEqual(r.body, { events: [], next: null });
  });

  it('refuses a bad limit or cursor with 400 naming the field', async () => {
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=ten', 'limit'],
      ['cursor=not-a-cursor', 'cursor'],
      [`cursor=${Buffer.from('[1,2,"x"]').toString('base64url')}`, 'cursor'],
      [`cursor=${Buffer.from('{"a":1}').toString('base64url')}`, 'cursor'],
      ['cursor=%2F%2F', 'cursor'],
    ]) {
      const r = await history(`subject=proj&predicate=note&${query}`);
      assert.equal(r.status, 400, `${query}: ${r.text}`);
      assert.equal(r.body.error.code, 'invalid_request');
      assert.match(r.body.error.message, new RegExp(`^${field}\\b`), query);
    }
  });
});

describe('MCP memory_history pages', () => {
  it('answers at most limit events and a cursor that chains like HTTP', async () => {
    const client = new Client({ name: 'tether-test', version: '0.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', srv.url), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    try {
      const pages = await chain('mcp', async (cursor) => {
        const r = (await client.callTool({
          name: 'memory_history',
          arguments: { subject: 'proj', predicate: 'note', limit: 500, ...(cursor ? { cursor } : {}) },
        })) as CallToolResult;
        assert.ok(!r.isError, JSON.stringify(r.content));
        return JSON.parse((r.content[0] as { text: string }).text);
      });
      assert.deepEqual(pages.flat(), all);
      assert.deepEqual(
        pages.map((p) => p.length),
        [500, 500, 204],
      );
      const bad = (await client.callTool({
        name: 'memory_history',
        arguments: { subject: 'proj', predicate: 'note', limit: 1001 },
      })) as CallToolResult;
      assert.ok(bad.isError);
      assert.match((bad.content[0] as { text: string }).text, /limit/);
    } finally {
      await client.close();
    }
  });
});

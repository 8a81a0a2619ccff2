/**
 * Lists that grow without bound answer pages, through `inject()`: turns, milestones, outputs,
 * pointers and working-state versions give at most `limit` rows (default 100, at most 1,000) and a
 * `next` cursor; following `next` reaches every row once, in order, and the last page says null.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../../src/common/clock.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../../helpers/memory-server.ts';

const clock = new ManualClock(Date.UTC(2026, 0, 1));
let server: TestMemoryServer;
let key: string;
const N = 7;

async function inject(method: string, url: string, payload?: unknown, headers = {}) {
  const res = await server.running.server.app.inject({
    method: method as 'GET',
    url,
    headers: { authorization: `Bearer ${key}`, ...headers },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  return { status: res.statusCode, body: res.json() };
}

before(async () => {
  server = await startTestMemoryServer({ clock });
  key = await server.agentKey('agents', 'pages', 86_400);
  const lease = await inject('POST', '/v1/lease/acquire', {});
  const fenced = { 'x-lease-epoch': String(lease.body.epoch) };
  for (let i = 1; i <= N; i++) {
    clock.advance(1);
    for (const [method, path, body] of [
      ['POST', '/v1/turns', { role: 'user', content: `turn ${i}` }],
      ['POST', '/v1/milestones', { name: `milestone ${i}` }],
      ['POST', '/v1/outputs', { content: `output ${i}` }],
      ['PUT', `/v1/pointers/p${i}`, { type: 'env', fields: { I: String(i) } }],
    ] as const) {
      const r = await inject(method, path, body, fenced);
      assert.ok(r.status < 300, `${method} ${path}: ${JSON.stringify(r.body)}`);
    }
  }
});
after(() => server.close());

/** Follows `next` from the first page of `path` (limit 3), returning every page's rows. */
async function follow(path: string, list: string, cursor: string) {
  const pages: unknown[][] = [];
  let url = `${path}?limit=3`;
  for (let i = 0; i < 10; i++) {
    const r = await inject('GET', url);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    pages.push(r.body[list]);
    if (r.body.next === null) return pages;
    url = `${path}?limit=3&${cursor}=${encodeURIComponent(String(r.body.next))}`;
  }
  throw new Error(`${path}: no last page`);
}

describe('paged resume lists', () => {
  it('GET /v1/turns pages backwards to the first turn, oldest first within a page', async () => {
    const pages = await follow('/v1/turns', 'turns', 'before_seq');
    assert.deepEqual(
      pages.map((p) => (p as { content: string }[]).map((t) => t.content)),
      [['turn 5', 'turn 6', 'turn 7'], ['turn 2', 'turn 3', 'turn 4'], ['turn 1']],
    );
  });

  it('GET /v1/milestones pages backwards the same way', async () => {
    const pages = await follow('/v1/milestones', 'milestones', 'before_seq');
    assert.deepEqual(
      pages.flat().map((m) => (m as { name: string }).name),
      ['milestone 5', 'milestone 6', 'milestone 7', 'milestone 2', 'milestone 3', 'milestone 4', 'milestone 1'],
    );
  });

  it('GET /v1/outputs pages newest first', async () => {
    const pages = await follow('/v1/outputs', 'outputs', 'before');
    assert.deepEqual(
      pages.map((p) => p.length),
      [3, 3, 1],
    );
    const refs = pages.flat().map((o) => (o as { ref: string }).ref);
    assert.deepEqual(refs, [...refs].sort().reverse());
    assert.equal(new Set(refs).size, N);
  });

  it('GET /v1/pointers pages by name', async () => {
    const pages = await follow('/v1/pointers', 'pointers', 'after');
    assert.deepEqual(
      pages.flat().map((p) => (p as { name: string }).name),
      ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7'],
    );
  });

  it('GET /v1/working-state/history pages by version', async () => {
    const pages = await follow('/v1/working-state/history', 'versions', 'before_version');
    const versions = pages.flat().map((v) => (v as { version: number }).version);
    assert.deepEqual(
      versions,
      [...versions].sort((a, b) => b - a),
    );
    assert.equal(versions.length, N, 'each milestone wrote a version');
  });

  it('answers at most 100 by default, next null when all fit, and refuses a limit above 1,000', async () => {
    const all = await inject('GET', '/v1/turns');
    assert.equal(all.body.turns.length, N);
    assert.equal(all.body.next, null);
    for (const path of ['/v1/turns', '/v1/milestones', '/v1/outputs', '/v1/pointers']) {
      const r = await inject('GET', `${path}?limit=1001`);
      assert.equal(r.status, 400, path);
      assert.match(r.body.error.message, /^limit: must be at most 1000/);
    }
  });
});

/**
 * A remember of many statements is checked in slices (`sliced-body.ts`), through `inject()`: it gives
 * the same answers as the whole-body check — 400 naming the first bad field (`statements[150].value`),
 * nothing stored — for a bad item, ill-formed text in an item or in the rest of the body, an unknown
 * field, too many statements; a good one is stored with its instants parsed once; the check lets the
 * event loop turn between slices.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { rememberSliced } from '../../src/server/schemas/memories.ts';
import { isCheckedBody, longArray, parseBodyInSlices, SLICED_FROM_ITEMS } from '../../src/server/sliced-body.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

const N = 4 * SLICED_FROM_ITEMS;
const notes = (prefix: string, n = N) =>
  Array.from({ length: n }, (_, i) => ({ subject: 'proj', predicate: 'note', value: `${prefix} ${i}` }));

describe('a long remember checked in slices', () => {
  let server: TestMemoryServer;
  let app: FastifyInstance;
  let key: string;
  before(async () => {
    server = await startTestMemoryServer();
    app = server.running.server.app;
    key = await server.agentKey('acme', 'sliced');
  });
  after(() => server.close());

  const remember = (payload: object) =>
    app.inject({ method: 'POST', url: '/v1/memories', headers: { authorization: `Bearer ${key}` }, payload });
  const stored = async (subject = 'proj') => {
    const res = await app.inject({
      method: 'GET',
      url: `/v1/memories/history?subject=${subject}&predicate=note&limit=1000`,
      headers: { authorization: `Bearer ${key}` },
    });
    return res.json().events.map((e: { value: string }) => e.value) as string[];
  };
  const refused = (res: { statusCode: number; json(): any }, field: string, message: RegExp) => {
    assert.equal(res.statusCode, 400, JSON.stringify(res.json()));
    assert.equal(res.json().error.code, 'invalid_request');
    const text: string = res.json().error.message;
    assert.ok(text.startsWith(`${field}: `), `names ${field}: ${text}`);
    assert.match(text.slice(field.length + 2), message);
  };

  it('names the first bad statement and stores nothing', async () => {
    const statements: object[] = notes('bad');
    statements[150] = { subject: 'proj', predicate: 'note', value: { nested: true } };
    statements[200] = { subject: 'proj', predicate: '', value: 'x' };
    refused(await remember({ statements }), 'statements[150].value', /./);
    assert.deepEqual(await stored(), []);
  });

  it('names an item that is not an object', async () => {
    const statements: unknown[] = notes('bad');
    statements[70] = 'just text';
    refused(await remember({ statements }), 'statements[70]', /./);
  });

  it('refuses ill-formed text in a statement and in the rest of the body', async () => {
    const statements = notes('nul');
    (statements[99] as { value: string }).value = 'a\u0000b';
    refused(await remember({ statements }), 'statements[99].value', /U\+0000/);
    refused(await remember({ namespace: 'acme:\u0000', statements: notes('ns') }), 'namespace', /U\+0000/);
    assert.deepEqual(await stored(), []);
  });

  it('refuses an unknown field and more than 1,000 statements, as the whole-body check does', async () => {
    refused(await remember({ statements: notes('u'), extra: 1 }), 'extra', /unknown field/);
    refused(await remember({ statements: notes('many', 1001) }), 'statements', /1000/);
    assert.deepEqual(await stored(), []);
  });

  it('stores a good batch in order, its instants parsed once (the validator passes the checked body)', async () => {
    const at = '2026-01-02T03:04:05.000Z';
    const statements = notes('good').map((s) => ({ ...s, subject: 'good', observed_at: at }));
    const res = await remember({ statements });
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    const results = res.json().results as { stored: boolean }[];
    assert.equal(results.length, N);
    assert.ok(results.every((r) => r.stored));
    assert.deepEqual(
      await stored('good'),
      statements.map((s) => s.value),
    );
    const history = await app.inject({
      method: 'GET',
      url: '/v1/memories/history?subject=good&predicate=note&limit=1',
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(history.json().events[0].observed_at, at);
  });
});

describe('parseBodyInSlices', () => {
  it('lets the event loop turn between slices, marks its result checked, and leaves short bodies alone', async () => {
    const body = { statements: notes('s') };
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const parsed = await parseBodyInSlices(body, rememberSliced, 1e-6); // a slice per statement
    ticking = false;
    assert.ok(turns >= N / 2, `other work ran between slices: ${turns} turns for ${N} statements`);
    assert.ok(isCheckedBody(parsed));
    assert.ok(!isCheckedBody(body));
    assert.equal((parsed as { statements: unknown[] }).statements.length, N);
    assert.notEqual(longArray(body, rememberSliced), null);
    assert.equal(longArray({ statements: notes('s', SLICED_FROM_ITEMS - 1) }, rememberSliced), null);
    assert.equal(longArray({ subject: 's' }, rememberSliced), null);
  });
});

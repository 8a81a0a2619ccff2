/**
 * An import body from `importOffLoopBytes` on is parsed and checked on a worker thread
 * (`src/server/import-off-loop.ts`, issue 21), through `inject()`: it stores exactly what the same body
 * stores when parsed on the event loop (events, registry versions, resume records, in chunks), refuses
 * what that refuses with the same status and line-named field and stores nothing then, and one worker
 * serves import after import.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AuthContext } from '../../src/auth/auth-context.ts';
import { isTetherError } from '../../src/common/errors.ts';
import { ImportWorker, importWorkerStats } from '../../src/server/import-off-loop.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

/** Body characters above which the worker parses: low, so a body of a few hundred events goes there. */
const OFF_LOOP_FROM = 4096;
const NOTES = 600;

let source: TestMemoryServer;
let onLoop: TestMemoryServer;
let offLoop: TestMemoryServer;
let backup: string;

before(async () => {
  source = await startTestMemoryServer();
  onLoop = await startTestMemoryServer({ importOffLoopBytes: Number.MAX_SAFE_INTEGER });
  offLoop = await startTestMemoryServer({ importOffLoopBytes: OFF_LOOP_FROM });
  const key = await source.agentKey('wk', 'a');
  const statements = Array.from({ length: NOTES }, (_, i) => ({ subject: 'proj', predicate: 'note', value: `n ${i}` }));
  assert.equal((await source.call('POST', '/v1/memories', { key, body: { statements } })).status, 200);
  await source.call('POST', '/v1/memories', { key, body: { subject: 'user', predicate: 'lives_in', value: 'Oslo' } });
  const lease = await source.call('POST', '/v1/lease/acquire', { key, body: { holder: 'pod', ttl_ms: 60_000 } });
  const headers = { 'x-lease-epoch': String(lease.body.epoch) };
  for (const content of ['one', 'two', 'three']) {
    const turn = await source.call('POST', '/v1/turns', { key, headers, body: { role: 'user', content } });
    assert.equal(turn.status, 201, turn.text);
  }
  const state = await source.call('PATCH', '/v1/working-state', { key, headers, body: { goal: 'ship', step: 2 } });
  assert.equal(state.status, 200, state.text);
  backup = (await source.call('GET', '/v1/events', { key: source.adminKey })).text;
});
after(async () => {
  await Promise.all([source.close(), onLoop.close(), offLoop.close()]);
});

const importInto = (s: TestMemoryServer, body: string) =>
  s.running.server.app.inject({
    method: 'POST',
    url: '/v1/events/import',
    headers: { authorization: `Bearer ${s.adminKey}`, 'content-type': 'application/x-ndjson' },
    payload: body,
  });
const exported = async (s: TestMemoryServer, ns: string) =>
  (
    await s.running.server.app.inject({
      method: 'GET',
      url: `/v1/events?namespace=${ns}`,
      headers: { authorization: `Bearer ${s.adminKey}` },
    })
  ).body;
const lines = () => backup.trim().split('\n');
const ndjson = (all: string[]) => `${all.join('\n')}\n`;
/**
 * The backup's events and records moved to tenant `tenant`, without its registry version (whose id is
 * the source tenant's: the events are checked against the default registry instead).
 */
const movedTo = (tenant: string) =>
  lines()
    .filter((l) => !l.startsWith('{"registry_version"'))
    .map((l) => l.replaceAll('"wk:a"', `"${tenant}:a"`).replaceAll('"wk"', `"${tenant}"`));

describe('POST /v1/events/import with the body parsed on a worker', () => {
  it('stores what the same body stores when parsed on the event loop, chunk by chunk', async () => {
    assert.ok(backup.length > OFF_LOOP_FROM, 'the backup is above the threshold');
    assert.ok(
      lines().some((l) => l.includes('"resume_record"')),
      'the backup holds resume records',
    );
    const before = { ...importWorkerStats };
    const on = await importInto(onLoop, backup);
    assert.equal(importWorkerStats.imports, before.imports, 'the event loop parsed it');
    const off = await importInto(offLoop, backup);
    assert.equal(importWorkerStats.imports, before.imports + 1, 'the worker parsed it');
    assert.equal(off.statusCode, 200, off.body);
    assert.deepEqual(off.json(), on.json());
    assert.equal(off.json().imported, NOTES + 1);
    assert.ok(off.json().resume_records >= 4, JSON.stringify(off.json()));
    assert.equal(await exported(offLoop, 'wk:a'), await exported(onLoop, 'wk:a'));
    assert.equal(await exported(offLoop, 'wk:a'), backup, 'the export is the backup, line for line');
    const again = await importInto(offLoop, backup);
    assert.equal(again.json().imported, 0);
    assert.equal(again.json().skipped, NOTES + 1);
  });

  const refusals: [string, (all: string[]) => string[], number, RegExp][] = [
    ['malformed JSON', (all) => [...all.slice(0, 40), '{"id":', ...all.slice(40)], 400, /^line 41: malformed JSON/],
    [
      'an unknown predicate (a memory check, after every line parsed)',
      (all) => all.map((l, i) => (i === 300 ? l.replace('"predicate":"note"', '"predicate":"planet"') : l)),
      400,
      /^line 301\.predicate: unknown predicate 'planet'/,
    ],
    [
      'an event line with an empty kind',
      (all) => all.map((l, i) => (i === 200 ? l.replace('"kind":null', '"kind":""') : l)),
      400,
      /^line 201\.kind: /,
    ],
  ];
  for (const [name, mangle, status, message] of refusals) {
    it(`refuses ${name} as the event loop does, naming the line, and stores nothing`, async () => {
      const body = ndjson(mangle(movedTo('wr')));
      assert.ok(body.length > OFF_LOOP_FROM);
      const on = await importInto(onLoop, body);
      const off = await importInto(offLoop, body);
      assert.equal(off.statusCode, status, `${off.body} on the loop: ${on.body}`);
      assert.match(off.json().error.message, message);
      assert.deepEqual(off.json(), on.json());
      assert.equal(await exported(offLoop, 'wr:a'), '');
      assert.deepEqual(await offLoop.running.store.registryVersions('wr'), []);
    });
  }

  it("refuses a tenant admin's line of another tenant with 403 namespace_mismatch", async () => {
    const minted = await offLoop.call('POST', '/v1/keys', { key: offLoop.adminKey, body: { tenant: 'other' } });
    assert.equal(minted.status, 201, minted.text);
    const res = await offLoop.running.server.app.inject({
      method: 'POST',
      url: '/v1/events/import',
      headers: { authorization: `Bearer ${minted.body.key}`, 'content-type': 'application/x-ndjson' },
      payload: backup,
    });
    assert.equal(res.statusCode, 403, res.body);
    assert.equal(res.json().error.code, 'namespace_mismatch');
  });

  it('keeps one worker for import after import', async () => {
    const before = { ...importWorkerStats };
    const body = ndjson(movedTo('wn'));
    for (let i = 0; i < 3; i++) assert.equal((await importInto(offLoop, body)).statusCode, 200);
    assert.equal(importWorkerStats.imports, before.imports + 3);
    assert.equal(importWorkerStats.started, before.started, 'the worker of the first test served these');
  });
});

describe('ImportWorker', () => {
  const admin: AuthContext = {
    keyId: 'k',
    tenant: '*',
    agent: null,
    session: null,
    admin: true,
    namespace: null,
    expiresAt: null,
  };
  const records = { now: Date.now(), turnTokenLimit: 2000 };

  // The timeout bounds a wait on an event (the worker's stop): a worker never stopped fails, not hangs.
  it('stops its worker once idle for idleMs, and starts a new one for the next import', {
    timeout: 60_000,
  }, async () => {
    let stopped = () => {};
    const stops = [new Promise<void>((r) => (stopped = r))];
    const worker = new ImportWorker({ idleMs: 0, onIdleStop: () => stopped() });
    try {
      const started = importWorkerStats.started;
      const counted = await worker.run(ndjson(lines()), admin, records, async (p) => p.events.count);
      assert.equal(counted, NOTES + 1);
      assert.equal(importWorkerStats.started, started + 1);
      await stops[0];
      stops.push(new Promise<void>((r) => (stopped = r)));
      await worker.run(ndjson(lines()), admin, records, async (p) => p.events.count);
      assert.equal(importWorkerStats.started, started + 2, 'the stopped worker was replaced');
      await stops[1];
    } finally {
      await worker.close();
    }
  });

  it("reports a client's mistake as its TetherError and anything else as a plain error (answered as internal, its text not sent)", async () => {
    const worker = new ImportWorker();
    try {
      await assert.rejects(
        worker.run('{"id":\n', admin, records, async () => {}),
        (err: Error) => isTetherError(err) && err.code === 'invalid_request' && err.field === 'line 1',
      );
      // Not a string: the parse itself fails on the worker, as a bug would.
      await assert.rejects(
        worker.run(42 as unknown as string, admin, records, async () => {}),
        (err: Error) => !isTetherError(err) && err.message.startsWith('import worker: '),
      );
    } finally {
      await worker.close();
    }
  });

  it('parses one import at a time: a second waits for the first to end', async () => {
    const worker = new ImportWorker();
    try {
      const order: string[] = [];
      let release = () => {};
      let entered = () => {};
      const held = new Promise<void>((r) => (release = r));
      const inFirst = new Promise<void>((r) => (entered = r));
      const first = worker.run(ndjson(lines()), admin, records, async () => {
        order.push('first in');
        entered();
        await held;
        order.push('first out');
      });
      const second = worker.run(ndjson(lines()), admin, records, async () => {
        order.push('second in');
      });
      await inFirst;
      release();
      await Promise.all([first, second]);
      assert.deepEqual(order, ['first in', 'first out', 'second in']);
    } finally {
      await worker.close();
    }
  });
});

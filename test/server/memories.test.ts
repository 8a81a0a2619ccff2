import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

let srv: TestMemoryServer;
let key: string;

before(async () => {
  srv = await startTestMemoryServer();
  key = await srv.agentKey('agents', 'run-1');
});
after(() => srv.close());

const remember = (body: unknown, k = key) => srv.call('POST', '/v1/memories', { key: k, body });
const recall = (query: string, k = key) => srv.call('GET', `/v1/memories?${query}`, { key: k });

describe('POST /v1/memories', () => {
  it('stores a fact and reports what a new single value superseded', async () => {
    const a = await remember({ subject: 'User', predicate: 'favorite_color', value: 'blue' });
    assert.equal(a.status, 200);
    assert.deepEqual([a.body.stored, a.body.already_known, a.body.superseded], [true, false, []]);
    assert.match(a.body.event.id, /^ev_[0-9a-f]{26}$/);
    assert.equal(a.body.event.subject, 'user');
    assert.deepEqual(a.body.event.actor, { tenant: 'agents', agent: 'run-1', session: null, key_id: key.slice(4, 20) });

    const b = await remember({ subject: 'user', predicate: 'favorite_color', value: 'green' });
    assert.deepEqual(b.body.superseded, ['blue']);
    const again = await remember({ subject: 'user', predicate: 'favorite_color', value: 'GREEN' });
    assert.deepEqual([again.body.stored, again.body.already_known, again.body.event], [false, true, null]);
  });

  it('accepts a batch and answers one result per statement', async () => {
    const r = await remember({
      statements: [
        { subject: 'ann', predicate: 'allergy', value: 'peanuts' },
        { subject: 'ann', predicate: 'allergy', value: 'pollen', confidence: 0.5, kind: 'medical' },
        { subject: 'ann', predicate: 'allergy', value: 'peanuts' },
      ],
    });
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.results.map((x: { stored: boolean; already_known: boolean }) => [x.stored, x.already_known]),
      [
        [true, false],
        [true, false],
        [false, true],
      ],
    );
  });

  it('validates a batch whole before any write', async () => {
    const r = await remember({
      statements: [
        { subject: 'bob', predicate: 'lives_in', value: 'Oslo' },
        { subject: 'bob', predicate: 'birthday', value: 'not a date' },
      ],
    });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, 'invalid_request');
    assert.match(r.body.error.message, /^statements\[1\]\.value:/);
    const check = await recall('subject=bob&predicate=lives_in');
    assert.deepEqual(check.body.beliefs, []);
  });
});

describe('GET /v1/memories', () => {
  it('recalls exactly, with replaced values and null for absent fields', async () => {
    const r = await recall('subject=user&predicate=favorite_color');
    assert.equal(r.status, 200);
    assert.equal(r.body.beliefs.length, 1);
    const b = r.body.beliefs[0];
    assert.deepEqual(Object.keys(b).sort(), [
      'confidence',
      'event_id',
      'kind',
      'observed_at',
      'predicate',
      'replaced',
      'source',
      'subject',
      'value',
    ]);
    assert.equal(b.value, 'green');
    assert.equal(b.kind, null);
    assert.equal(b.source, null);
    assert.deepEqual(
      b.replaced.map((x: { value: string }) => x.value),
      ['blue'],
    );
  });

  it('searches text and never returns a superseded value', async () => {
    const green = await recall('q=green');
    assert.deepEqual(
      green.body.beliefs.map((b: { value: string }) => b.value),
      ['green'],
    );
    const blue = await recall('q=blue');
    assert.deepEqual(blue.body.beliefs, []);
  });

  it('answers as of a time before a change', async () => {
    await remember({ subject: 'cara', predicate: 'lives_in', value: 'Paris', observed_at: '2026-01-01T00:00:00Z' });
    await remember({ subject: 'cara', predicate: 'lives_in', value: 'Rome', observed_at: '2026-06-01T00:00:00Z' });
    const before = await recall('subject=cara&predicate=lives_in&as_of=2026-03-01T00:00:00Z');
    assert.equal(before.body.beliefs[0].value, 'Paris');
    const early = await recall(`subject=cara&predicate=lives_in&as_of=${Date.UTC(2025, 0, 1)}`);
    assert.deepEqual(early.body.beliefs, []);
    const now = await recall('subject=cara&predicate=lives_in');
    assert.equal(now.body.beliefs[0].value, 'Rome');
  });

  it('filters by min_confidence and kind', async () => {
    const all = await recall('subject=ann&predicate=allergy');
    assert.equal(all.body.beliefs.length, 2);
    const sure = await recall('subject=ann&predicate=allergy&min_confidence=0.9');
    assert.deepEqual(
      sure.body.beliefs.map((b: { value: string }) => b.value),
      ['peanuts'],
    );
    // Exponent notation, as String(1e-7) writes it (the SDK's query string).
    const tiny = await recall('subject=ann&predicate=allergy&min_confidence=1e-7');
    assert.equal(tiny.status, 200, tiny.text);
    assert.equal(tiny.body.beliefs.length, 2);
    assert.equal((await recall('subject=ann&predicate=allergy&min_confidence=9E-1')).body.beliefs.length, 1);
    const medical = await recall('subject=ann&kind=medical');
    assert.deepEqual(
      medical.body.beliefs.map((b: { value: string }) => b.value),
      ['pollen'],
    );
  });
});

describe('GET /v1/memories/history', () => {
  it('returns every event oldest first with its actor', async () => {
    const r = await srv.call('GET', '/v1/memories/history?subject=user&predicate=favorite_color', { key });
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.events.map((e: { value: string; retraction: boolean }) => [e.value, e.retraction]),
      [
        ['blue', false],
        ['green', false],
      ],
    );
    assert.equal(r.body.events[0].actor.agent, 'run-1');
  });
});

describe('POST /v1/memories/forget', () => {
  it('retracts one value, keeps the record, and does not revive an older value', async () => {
    const one = await srv.call('POST', '/v1/memories/forget', {
      key,
      body: { subject: 'user', predicate: 'favorite_color', value: 'green' },
    });
    assert.deepEqual(one.body, { withdrawn: 1 });
    const now = await recall('subject=user&predicate=favorite_color');
    assert.deepEqual(now.body.beliefs, []);
    const hist = await srv.call('GET', '/v1/memories/history?subject=user&predicate=favorite_color', { key });
    assert.equal(hist.body.events.length, 3);
    assert.equal(hist.body.events[2].retraction, true);
  });

  it('retracts all values when no value is named', async () => {
    const all = await srv.call('POST', '/v1/memories/forget', { key, body: { subject: 'ann', predicate: 'allergy' } });
    assert.deepEqual(all.body, { withdrawn: 2 });
    const none = await srv.call('POST', '/v1/memories/forget', { key, body: { subject: 'ann', predicate: 'allergy' } });
    assert.deepEqual(none.body, { withdrawn: 0 });
  });
});

describe('GET /v1/whoami', () => {
  it('describes the key with null for absent values', async () => {
    const r = await srv.call('GET', '/v1/whoami', { key });
    assert.deepEqual(r.body, {
      key_id: key.slice(4, 20),
      tenant: 'agents',
      agent: 'run-1',
      session: null,
      namespace: 'agents:run-1',
      admin: false,
      expires_at: null,
    });
  });
});

describe('GET/PUT /v1/registry', () => {
  it('lists predicates with note always present', async () => {
    const r = await srv.call('GET', '/v1/registry', { key });
    assert.equal(r.status, 200);
    assert.ok(r.body.predicates.some((p: { name: string }) => p.name === 'note'));
  });

  it('applies a new cardinality from the moment it is recorded', async () => {
    const k = await srv.agentKey('regtest', 'a');
    const put = (predicates: unknown[]) =>
      srv.call('PUT', '/v1/registry', { key: srv.adminKey, body: { tenant: 'regtest', predicates } });
    const p1 = await put([{ name: 'tag', cardinality: 'multi', value_type: 'string' }]);
    assert.equal(p1.status, 200);
    await remember({ subject: 's', predicate: 'tag', value: 'x' }, k);
    await remember({ subject: 's', predicate: 'tag', value: 'y' }, k);
    const beforeChange = Date.now();
    // the next version must be recorded in a later millisecond than `beforeChange`
    while (Date.now() <= beforeChange + 1) await new Promise((r) => setImmediate(r));
    const p2 = await put([{ name: 'tag', cardinality: 'single', value_type: 'string' }]);
    assert.equal(p2.status, 200);
    const now = await recall('subject=s&predicate=tag', k);
    assert.deepEqual(
      now.body.beliefs.map((b: { value: string }) => b.value),
      ['y'],
    );
    const then = await recall(`subject=s&predicate=tag&as_of=${beforeChange}`, k);
    assert.deepEqual(then.body.beliefs.map((b: { value: string }) => b.value).sort(), ['x', 'y']);
    const typeChange = await put([{ name: 'tag', cardinality: 'single', value_type: 'number' }]);
    assert.equal(typeChange.status, 400);
    assert.match(typeChange.body.error.message, /predicates\[0\]\.value_type/);
  });

  it('refuses an agent key with 403 forbidden', async () => {
    const r = await srv.call('PUT', '/v1/registry', { key, body: { predicates: [] } });
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, 'forbidden');
  });
});

describe('operations', () => {
  it('serves healthz, readyz, metrics and openapi without a key', async () => {
    assert.equal((await srv.call('GET', '/healthz')).status, 200);
    assert.equal((await srv.call('GET', '/readyz')).body.status, 'ready');
    const metrics = await srv.call('GET', '/metrics');
    assert.match(metrics.text, /tether_http_request_duration_seconds_bucket/);
    assert.doesNotMatch(metrics.text, /tether_memory_events_stored/); // every tenant's data: behind --metrics-token
    const doc = await srv.call('GET', '/openapi.json');
    assert.equal(doc.body.openapi, '3.1.0');
    assert.ok(doc.body.paths['/v1/memories'].post.requestBody);
    assert.ok(doc.body.paths['/v1/memories'].get.parameters.some((p: { name: string }) => p.name === 'as_of'));
  });

  it('counts group commits and the writes they carried on /metrics', async () => {
    const counters = async () => {
      const text = (await srv.call('GET', '/metrics')).text;
      const value = (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1]);
      return { batches: value('tether_memory_write_batches_total'), jobs: value('tether_memory_write_jobs_total') };
    };
    const before = await counters();
    // Sent together, so they can share a commit; each is one job.
    await Promise.all(['a', 'b', 'c'].map((s) => remember({ subject: `metrics-${s}`, predicate: 'note', value: s })));
    const after = await counters();
    assert.equal(after.jobs - before.jobs, 3);
    assert.ok(after.batches - before.batches >= 1 && after.batches - before.batches <= 3);
  });

  it('types the cumulative key-cache and group-commit figures as counters named _total', async () => {
    const text = (await srv.call('GET', '/metrics')).text;
    for (const name of ['auth_key_cache_hits', 'auth_key_cache_misses', 'memory_write_batches', 'memory_write_jobs']) {
      assert.match(text, new RegExp(`^# TYPE tether_${name}_total counter$`, 'm'), name);
      assert.doesNotMatch(text, new RegExp(`^tether_${name} `, 'm'), `${name} without _total`);
    }
    const hits = (t: string) => Number(/^tether_auth_key_cache_hits_total (\d+)/m.exec(t)?.[1]);
    const before = hits(text);
    await srv.call('GET', '/metrics'); // not keyed; a keyed call next is answered from the cache
    await remember({ subject: 'metrics-hit', predicate: 'note', value: 'x' });
    assert.ok(hits((await srv.call('GET', '/metrics')).text) > before, 'grows with keyed requests');
  });
});

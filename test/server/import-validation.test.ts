/**
 * Import checks each event as the write path would (issue 9, item 8): a refused request names the
 * line and field and stores nothing; ids and actors are kept; the export's registry versions restore
 * the rules of their time on another server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

let srv: TestMemoryServer;
let target: TestMemoryServer;
let good: Record<string, any>;
let registryLine: string;

before(async () => {
  srv = await startTestMemoryServer();
  target = await startTestMemoryServer();
  const key = await srv.agentKey('imp', 'a');
  await srv.call('POST', '/v1/memories', { key, body: { subject: 'user', predicate: 'lives_in', value: 'Oslo' } });
  const lines = (await srv.call('GET', '/v1/events', { key })).text.trim().split('\n');
  registryLine = lines[0] as string;
  good = JSON.parse(lines[1] as string);
});
after(async () => {
  await srv.close();
  await target.close();
});

const ndjson = (...lines: unknown[]) =>
  `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`;
const importInto = (s: TestMemoryServer, body: string) =>
  s.call('POST', '/v1/events/import', { key: s.adminKey, body, headers: { 'content-type': 'application/x-ndjson' } });
const id = (n: number) => `ev_${n.toString(16).padStart(12, '0')}00000000000000`;

describe('POST /v1/events/import refuses what a write would refuse', () => {
  const cases: [string, (e: Record<string, any>) => Record<string, any>, RegExp][] = [
    ['an unknown predicate', (e) => ({ ...e, predicate: 'favourite_planet' }), /^line 3\.predicate: unknown predicate/],
    ['an alias instead of the canonical name', (e) => ({ ...e, predicate: 'location' }), /^line 3\.predicate: /],
    [
      'a subject that is not normalised',
      (e) => ({ ...e, subject: '  User  X' }),
      /^line 3\.subject: is not normalised/,
    ],
    ['observed_at in the year 9999', (e) => ({ ...e, observed_at: '9999-01-01T00:00:00Z' }), /^line 3\.observed_at: /],
    [
      'recorded_at in the future',
      (e) => ({ ...e, recorded_at: '9999-01-01T00:00:00Z', observed_at: '9999-01-01T00:00:00Z' }),
      /^line 3\.recorded_at: /,
    ],
    ['a value disagreeing with its identity key', (e) => ({ ...e, value: 'Rome' }), /^line 3\.value_key: /],
    [
      'a value of the wrong type',
      (e) => ({ ...e, value: 42, value_key: '42' }),
      /^line 3\.value: 'lives_in' takes a string/,
    ],
    [
      'a value not as a write stores it',
      (e) => ({ ...e, value: ' Oslo ', value_key: 'oslo' }),
      /^line 3\.value: is not as a write stores it/,
    ],
    [
      'an assertion without a value',
      (e) => ({ ...e, value: null, value_key: null }),
      /^line 3\.value: an assertion needs a value/,
    ],
    ['a blanket retraction with a value key', (e) => ({ ...e, value: null, retraction: true }), /^line 3\.value_key: /],
    ['a lone surrogate', (e) => ({ ...e, evidence: 'x\ud800' }), /^line 3\.evidence: contains a lone UTF-16 surrogate/],
  ];
  for (const [name, mangle, message] of cases) {
    it(`refuses ${name}, naming the line and field, and stores nothing of the request`, async () => {
      const fine = { ...good, id: id(1), namespace: 'imp:b', actor: { ...good.actor, agent: 'b' } };
      const bad = mangle({ ...good, id: id(2), namespace: 'imp:b' });
      const r = await importInto(target, ndjson(registryLine, fine, bad));
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, 'invalid_request');
      assert.match(r.body.error.message, message);
      assert.equal((await target.call('GET', '/v1/events?namespace=imp:b', { key: target.adminKey })).text, '');
      assert.deepEqual(await target.running.store.registryVersions('imp'), []);
    });
  }
});

describe('POST /v1/events/import restores a backup', () => {
  it('keeps ids and actors, and restores the registry versions so old rules apply', async () => {
    const key = await srv.agentKey('hist', 'a');
    const t0 = Date.now() - 60_000;
    await srv.call('POST', '/v1/memories', {
      key,
      body: { subject: 'user', predicate: 'note', value: 'before mood existed', observed_at: t0 },
    });
    const put = await srv.call('PUT', '/v1/registry', {
      key: srv.adminKey,
      body: {
        tenant: 'hist',
        predicates: [{ name: 'mood', cardinality: 'single', value_type: 'enum', allowed: ['calm', 'busy'] }],
      },
    });
    assert.equal(put.status, 200);
    await srv.call('POST', '/v1/memories', { key, body: { subject: 'user', predicate: 'mood', value: 'Calm' } });
    const exported = (await srv.call('GET', '/v1/events', { key })).text;
    assert.equal(exported.split('\n').filter((l) => l.includes('"registry_version"')).length, 2);

    const r = await importInto(target, exported);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { imported: 2, skipped: 0, registry_versions: 2, resume_records: 0 });
    const again = (await target.call('GET', '/v1/events?namespace=hist:a', { key: target.adminKey })).text;
    assert.equal(again, exported);
    const versions = await target.running.store.registryVersions('hist');
    assert.deepEqual(versions, await srv.running.store.registryVersions('hist'));
    const mood = await target.call('GET', '/v1/memories?namespace=hist:a&subject=user&predicate=mood', {
      key: target.adminKey,
    });
    assert.equal(mood.body.beliefs[0].value, 'calm');
    const ev = JSON.parse(again.trim().split('\n').at(-1) as string);
    assert.equal(ev.actor.key_id, JSON.parse(exported.trim().split('\n').at(-1) as string).actor.key_id);
  });

  it('refuses a registry version that changes a value type, naming the line', async () => {
    const line = JSON.parse(registryLine);
    line.registry_version.id = id(9);
    line.registry_version.recorded_at = new Date(Date.now() - 1000).toISOString();
    line.registry_version.predicates = [{ name: 'lives_in', cardinality: 'single', value_type: 'number' }];
    const r = await importInto(srv, ndjson(line));
    assert.equal(r.status, 400);
    assert.match(r.body.error.message, /^line 1\.registry_version\.predicates\[0\]\.value_type: /);
  });

  it("refuses a registry version with the id of another tenant's (an edited backup), naming the line, storing nothing", async () => {
    const moved = (l: string) => l.replaceAll('"imp:', '"moved:').replaceAll('"imp"', '"moved"');
    // srv stored that version for tenant imp.
    const r = await importInto(srv, ndjson(moved(registryLine), moved(JSON.stringify(good))));
    assert.equal(r.status, 400, r.text);
    assert.match(r.body.error.message, /^line 1\.registry_version\.id: is the id of another tenant's registry version/);
    assert.ok(!r.text.includes('imp'), 'the other tenant is not named');
    assert.deepEqual(await srv.running.store.registryVersions('moved'), []);
    assert.equal((await srv.call('GET', '/v1/events?namespace=moved:a', { key: srv.adminKey })).text, '');
  });

  it('refuses one registry version id under two tenants in one body, naming the second line', async () => {
    const twice = (tenant: string) => {
      const line = JSON.parse(registryLine);
      line.registry_version.id = id(11);
      line.registry_version.tenant = tenant;
      return line;
    };
    const r = await importInto(target, ndjson(twice('twin-a'), twice('twin-b')));
    assert.equal(r.status, 400, r.text);
    assert.match(
      r.body.error.message,
      /^line 2\.registry_version\.id: is the id of tenant 'twin-a's registry version too/,
    );
    assert.deepEqual(await target.running.store.registryVersions('twin-a'), []);
  });
});

/**
 * Faults of `tether memory --store postgres` (real processes, a real PostgreSQL): a database restart
 * answers 503 + Retry-After and not-ready meanwhile, then serves again without a restart of the
 * replica; a SIGKILLed replica loses no acknowledged write; an unreachable URL at start exits
 * non-zero naming host and port, never the password.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { mintAgentKey, newAdminKey, startReplica, within } from '../helpers/memory-replicas.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { fromSource, TETHER_BIN } from '../helpers/tether-cli.ts';

describe('tether memory --store postgres under faults', () => {
  let pg: TestPostgres;
  let url: string;
  const admin = newAdminKey();
  before(async () => {
    pg = await startPostgres();
    url = await pg.createDatabase();
  });
  after(() => pg?.stop());

  it('answers 503 + Retry-After while PostgreSQL restarts, is not ready, and serves again without a restart', async () => {
    const r = await startReplica(url, admin);
    try {
      const key = await mintAgentKey(r, admin, 'faults', 'restart');
      const write = (value: string) => r.call('POST', '/v1/memories', key, { subject: 'u', predicate: 'note', value });
      assert.equal((await write('before')).status, 200);
      await pg.halt();
      const during = await write('during');
      assert.equal(during.status, 503, JSON.stringify(during.body));
      assert.equal(during.body.error.code, 'unavailable');
      assert.ok(Number(during.headers.get('retry-after')) >= 1);
      const read = await r.call('GET', '/v1/memories?subject=u', key);
      assert.equal(read.status, 503);
      const ready = await fetch(`${r.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.ok(ready.headers.get('retry-after'));
      assert.ok(!r.output().includes(pg.password), 'no password in any log line');
      await pg.start();
      await within(60_000, async () => (await fetch(`${r.url}/readyz`)).status === 200);
      assert.equal((await write('after')).status, 200);
      const got = await r.call('GET', '/v1/memories?subject=u&predicate=note', key);
      assert.deepEqual(got.body.beliefs.map((b: { value: string }) => b.value).sort(), ['after', 'before']);
      assert.equal(r.child.exitCode, null, 'the replica kept running');
      // The change channel came back too: a resync flushed the caches.
      await within(60_000, async () =>
        /tether_store_cache_flushes_total [1-9]/.test(await (await fetch(`${r.url}/metrics`)).text()),
      );
    } finally {
      await r.stop();
    }
  });

  it('loses no acknowledged write when a replica is SIGKILLed mid-write', async () => {
    const victim = await startReplica(url, admin);
    const witness = await startReplica(url, admin);
    try {
      const key = await mintAgentKey(witness, admin, 'faults', 'kill');
      const acknowledged: string[] = [];
      let stop = false;
      const writer = async (w: number) => {
        for (let i = 0; !stop; i++) {
          try {
            const res = await victim.call('POST', '/v1/memories', key, {
              subject: `s${w}`,
              predicate: 'note',
              value: `w${w}-${i}`,
            });
            if (res.status === 200) acknowledged.push(res.body.event.id);
          } catch {
            return; // the connection died with the process
          }
        }
      };
      const writers = Array.from({ length: 8 }, (_, w) => writer(w));
      await within(60_000, async () => acknowledged.length >= 100);
      await victim.kill();
      stop = true;
      await Promise.all(writers);
      const res = await fetch(`${witness.url}/v1/events`, { headers: { authorization: `Bearer ${key}` } });
      const stored = new Set(
        (await res.text())
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).id),
      );
      const lost = acknowledged.filter((id) => !stored.has(id));
      assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged writes lost`);
    } finally {
      await victim.kill();
      await witness.stop();
    }
  });

  it('exits non-zero at start naming host and port when PostgreSQL cannot be reached', () => {
    const res = spawnSync(
      process.execPath,
      [
        TETHER_BIN,
        'memory',
        '--port',
        '0',
        '--store',
        'postgres',
        '--postgres-url',
        'postgres://tether:hunter2pw@127.0.0.1:9/db',
      ],
      { encoding: 'utf8', env: fromSource({ ...process.env, TETHER_ADMIN_KEY: admin }), timeout: 120_000 },
    );
    assert.notEqual(res.status, 0);
    assert.match(res.stderr, /Cannot reach PostgreSQL at 127\.0\.0\.1:9/);
    assert.ok(!`${res.stdout}${res.stderr}`.includes('hunter2pw'));
  });
});

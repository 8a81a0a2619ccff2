/**
 * `GET /v1/events?since=` on two `tether memory --store postgres` replicas (real processes, one real
 * PostgreSQL) taking concurrent writes: an exporter that keeps asking from the last event id it saw
 * gets every event of a full export once (batches commit out of id order; paging on ids lost some),
 * and a since that names no stored event is a 400 naming `since`, before any line is sent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitFor } from '../gateway/helpers/harness.ts';
import {
  mintAgentKey,
  newAdminKey,
  type Replica,
  startReplicaPair,
  stopReplicaPair,
} from '../helpers/memory-replicas.ts';
import type { TestPostgres } from '../helpers/postgres.ts';

/** The event lines of an export (not the registry versions before them). */
async function exportEvents(r: Replica, key: string, since?: string): Promise<{ id: string }[]> {
  const res = await fetch(`${r.url}/v1/events${since ? `?since=${since}` : ''}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  assert.equal(res.status, 200);
  return (await res.text())
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l))
    .filter((l) => !('registry_version' in l));
}

describe('incremental export from two PostgreSQL replicas', () => {
  let pg: TestPostgres;
  let a: Replica;
  let b: Replica;
  const admin = newAdminKey();

  before(async () => {
    ({ pg, a, b } = await startReplicaPair(admin));
  });
  after(() => stopReplicaPair({ pg, a, b }));

  it('gives an exporter asking since its last id every event once while both replicas write', async () => {
    const key = await mintAgentKey(a, admin, `x${Date.now().toString(36)}`, 'run');
    let writing = true;
    let written = 0;
    const writers = Array.from({ length: 16 }, async (_, w) => {
      for (let n = 0; writing; n++) {
        const res = await (w % 2 ? a : b).call('POST', '/v1/memories', key, {
          subject: `s${w}`,
          predicate: 'note',
          value: `w${w} n${n}`,
        });
        assert.equal(res.status, 200);
        written += 1;
      }
    });
    const seen: string[] = [];
    let since: string | undefined;
    const pull = async (r: Replica) => {
      const page = await exportEvents(r, key, since);
      seen.push(...page.map((e) => e.id));
      since = page[page.length - 1]?.id ?? since;
    };
    const exporter = (async () => {
      for (let i = 0; writing; i++) await pull(i % 2 ? a : b);
    })();
    await sleep(3000);
    // A loaded machine writes fewer in that window: go on until there are enough to race (asserted below).
    await waitFor('more than 200 writes', () => written > 200);
    writing = false;
    await Promise.all([exporter, ...writers]);
    await pull(a);

    const full = (await exportEvents(b, key)).map((e) => e.id);
    assert.ok(full.length > 200, `enough writes to race: ${full.length}`);
    assert.equal(new Set(seen).size, seen.length, 'no event twice');
    const got = new Set(seen);
    assert.deepEqual(
      full.filter((id) => !got.has(id)),
      [],
      'no event of the full export missed',
    );
    assert.deepEqual(seen, full, 'in the order of the full export');
  });

  it('refuses a since that names no stored event with 400 naming since', async () => {
    const key = await mintAgentKey(a, admin, `y${Date.now().toString(36)}`, 'run');
    const res = await a.call('GET', '/v1/events?since=ev_0123456789abcdef0123456789', key);
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_request');
    assert.match(res.body.error.message, /^since: /);
    assert.ok(!res.headers.get('content-type')?.includes('ndjson'), 'refused before the stream starts');
  });
});

/**
 * An import is stored in chunks (issue 21: a 1 MiB import must not hold other tenants' writes): the
 * result is the one a single-transaction import gives (events, order, beliefs, counts), a refused line
 * anywhere still stores nothing, and another tenant's write queued while the import stores goes in
 * between two chunks instead of after the whole import.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newEventId } from '../../src/common/ids.ts';
import { type ImportedEvent, importBackup } from '../../src/memory/backup-import.ts';
import type { StoredEvent } from '../../src/store/store.ts';
import { ACTOR, MINUTE, NAMESPACE, refused, setup } from './helpers.ts';

/** An export of `NAMESPACE` from a store where single and multi facts changed, with a retraction. */
async function exported(t: Parameters<typeof setup>[0]): Promise<StoredEvent[]> {
  const s = setup(t);
  for (let i = 0; i < 40; i++) {
    await s.engine.remember(s.ctx, [
      { subject: `p${i % 6}`, predicate: 'lives_in', value: `city ${i}` },
      { subject: `p${i % 6}`, predicate: 'note', value: `note ${i}` },
    ]);
    if (i % 9 === 0) await s.engine.forget(s.ctx, { subject: `p${i % 6}`, predicate: 'note', value: `note ${i}` });
    s.clock.advance(MINUTE);
  }
  return s.store.exportEvents({ namespace: NAMESPACE, limit: 10_000 });
}

/** A fresh store to import into, its clock past every exported event's time. */
function importer(t: Parameters<typeof setup>[0]) {
  const s = setup(t);
  s.clock.advance(100 * MINUTE);
  return s;
}

const asLines = (events: StoredEvent[]): ImportedEvent[] => events.map((event, i) => ({ at: `line ${i + 1}`, event }));

describe('importBackup in chunks', () => {
  it('stores what one transaction would: the same events, order, beliefs and counts', async (t) => {
    const events = await exported(t);
    assert.ok(events.length > 80);
    const whole = importer(t);
    const chunked = importer(t);
    const items = { versions: [], events: [...asLines(events), ...asLines(events.slice(0, 5))] };
    const a = await importBackup(whole, items, { chunk: 100_000 });
    let calls = 0;
    const counting = {
      importEvents: (e: StoredEvent[]) => {
        calls++;
        return chunked.engine.importEvents(e);
      },
    };
    const b = await importBackup({ ...chunked, engine: counting }, items, { chunk: 7 });
    assert.equal(calls, Math.ceil(items.events.length / 7));
    assert.deepEqual(b, a);
    assert.deepEqual(a, { imported: events.length, skipped: 5, registryVersions: 0 });
    const dump = async (s: ReturnType<typeof setup>) => ({
      events: await s.store.exportEvents({ namespace: NAMESPACE, limit: 10_000 }),
      beliefs: await s.store.currentBeliefs({ namespace: NAMESPACE, limit: 10_000 }),
      search: await s.search('city'),
    });
    assert.deepEqual(await dump(chunked), await dump(whole));
    assert.deepEqual((await dump(chunked)).events, events);
  });

  it('stores nothing when a line after the first chunks is refused', async (t) => {
    const events = await exported(t);
    const s = importer(t);
    const bad = { ...(events[events.length - 1] as StoredEvent), id: newEventId(), valueKey: 'not its value' };
    const lines = asLines([...events, bad]);
    const err = await refused(
      importBackup(s, { versions: [], events: lines }, { chunk: 10 }),
      `line ${lines.length}.value_key`,
    );
    assert.ok(err);
    assert.equal(await s.store.countEvents(NAMESPACE), 0);
  });

  it("lets another tenant's write in between two chunks", async (t) => {
    const events = await exported(t);
    const s = importer(t);
    const order: string[] = [];
    let other: Promise<unknown> | null = null;
    const engine = {
      importEvents: async (e: StoredEvent[]) => {
        const n = await s.engine.importEvents(e);
        order.push('chunk');
        // queued while the import is still storing: it must not wait for the import's last chunk
        other ??= s.engine
          .remember({ namespace: 'other:run-1', actor: { ...ACTOR, tenant: 'other' } }, [
            { subject: 'bob', predicate: 'note', value: 'between chunks' },
          ])
          .then(() => order.push('other'));
        return n;
      },
    };
    const chunkCount = Math.ceil(events.length / 20);
    const importing = importBackup({ ...s, engine }, { versions: [], events: asLines(events) }, { chunk: 20 });
    await importing;
    await other;
    assert.ok(chunkCount >= 3);
    assert.equal(order.filter((o) => o === 'chunk').length, chunkCount);
    assert.ok(order.indexOf('other') < order.length - 1, `the other write went in before the last chunk: ${order}`);
  });
});

/**
 * `examples/resume` with whole processes: a worker does steps 1-2 and is killed with SIGKILL while
 * its lease is live; a new worker resumes once that lease lapsed, continues at step 3 and redoes
 * nothing. The turn log shows each step once, in order, steps 1-2 under the first epoch and 3-5 under
 * a higher one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCrashAndResume } from '../../examples/resume/scenario.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

describe('examples/resume: crash and resume', () => {
  let server: TestMemoryServer;
  before(async () => {
    server = await startTestMemoryServer();
  });
  after(() => server.close());

  // A 6 s lease: long enough for a loaded machine to renew it (every 2 s), short enough for the test's wait.
  it('continues at step 3 after a SIGKILL and redoes nothing', async () => {
    const { key, events } = await runCrashAndResume({
      url: server.url,
      adminKey: server.adminKey,
      log: () => {},
      leaseTtlMs: 6000,
    });
    const resumed = events.filter((e) => e.event === 'resumed');
    assert.equal(resumed.length, 2);
    assert.deepEqual(
      resumed.map((e) => e.next_step),
      [1, 3],
    );
    assert.deepEqual(
      resumed.map((e) => e.fresh),
      [true, false],
    );
    const [first, second] = resumed.map((e) => e.epoch as number) as [number, number];
    assert.ok(second > first);

    const turns = (await server.call('GET', '/v1/turns', { key })).body;
    assert.equal(turns.total, 5, 'no step recorded twice');
    assert.deepEqual(
      turns.turns.map((t: { seq: number; content: string; epoch: number }) => [
        t.seq,
        t.content.split(':')[0],
        t.epoch,
      ]),
      [
        [1, 'step 1', first],
        [2, 'step 2', first],
        [3, 'step 3', second],
        [4, 'step 4', second],
        [5, 'step 5', second],
      ],
    );
    const state = (await server.call('GET', '/v1/working-state', { key })).body;
    assert.deepEqual([state.step, state.last_milestone, state.progress], [5, 'step 5', '5 of 5 done']);
    const milestones = (await server.call('GET', '/v1/milestones', { key })).body.milestones;
    assert.deepEqual(
      milestones.map((m: { name: string }) => m.name),
      ['step 1', 'step 2', 'step 3', 'step 4', 'step 5'],
    );
    // The second worker took the lease only after the first one's had lapsed (it was never released).
    const lease = (await server.call('GET', '/v1/lease', { key })).body;
    assert.equal(lease.held, false, 'released at the end');
    assert.equal(lease.epoch, second);
  });
});

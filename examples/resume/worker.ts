/**
 * The crash-and-resume worker: a 5-step task recorded under the agent's lease. It resumes (waiting
 * while an earlier worker's lease is still live), continues after the last step its working state
 * records, and for each step records a turn (message_id `step-N`, so a retry is not stored twice),
 * the working state and a milestone. It redoes nothing that is recorded.
 * Env: TETHER_URL, TETHER_KEY; LEASE_TTL_MS (default 2000); STEP_MS (default 50, the "work" of a step).
 * Prints one JSON line per event on stdout (`resumed`, `step`, `done`), which the runner and the test read.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { TetherClient } from '../../src/sdk/client.ts';

const { TETHER_URL, TETHER_KEY, LEASE_TTL_MS = '2000', STEP_MS = '50' } = process.env;
if (!TETHER_URL || !TETHER_KEY) {
  process.stderr.write('worker needs TETHER_URL and TETHER_KEY\n');
  process.exit(2);
}
const STEPS = ['fetch the data', 'clean it', 'train the model', 'evaluate it', 'write the report'];
const say = (event: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify({ pid: process.pid, ...event })}\n`);

const client = TetherClient.fromKey({ url: TETHER_URL, key: TETHER_KEY });
const agent = await client.resume({
  holder: `worker-${process.pid}`,
  ttlMs: Number(LEASE_TTL_MS),
  waitMs: 120_000,
  pollMs: 200,
});
agent.on('lost', (err) => {
  say({ event: 'lost', message: err.message });
  process.exit(3);
});
const done = agent.resumed.working_state.step ?? 0;
say({ event: 'resumed', epoch: agent.epoch, fresh: agent.resumed.fresh, next_step: done + 1 });
if (agent.resumed.fresh) {
  await agent.updateWorkingState({ goal: 'a 5-step task', plan: STEPS, step: 0, progress: 'not started' });
}

for (let step = done + 1; step <= STEPS.length; step++) {
  await sleep(Number(STEP_MS)); // the step's work
  const what = STEPS[step - 1] as string;
  await agent.recordTurn({ role: 'assistant', content: `step ${step}: ${what}`, message_id: `step-${step}` });
  await agent.updateWorkingState({ step, progress: `${step} of ${STEPS.length} done`, focus: STEPS[step] ?? null });
  await agent.milestone(`step ${step}`);
  say({ event: 'step', step, epoch: agent.epoch });
}
await agent.release();
say({ event: 'done' });

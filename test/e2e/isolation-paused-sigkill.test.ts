/**
 * A paused isolated instance ends with its gateway too. Frozen processes act on no signal, so
 * bubblewrap's `--die-with-parent` kill would wait for a thaw that never comes; the thaw watchdog
 * (src/runtime/local/isolation/thaw-watchdog.ts) thaws them when the gateway is SIGKILLed, and goes
 * itself. Needs root (network namespaces, cgroups), as the other isolation tests.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type AdminInstance, procState, send, serviceYaml, waitFor } from '../gateway/helpers/harness.ts';
import { childrenRunning, openTempDir, processesOf, sessionMembers } from '../runtime/local/isolation/helpers.ts';
import { adminJson, LOOPBACK_PORTS, runGateway } from './helpers/gateway-process.ts';

/** Text of the thaw watchdog's script (thaw-watchdog.ts), to find it among a gateway's children. */
const WATCHDOG = 'while IFS= read -r line';

describe('tether gateway --isolation namespaces: SIGKILL with a paused instance', () => {
  it('the frozen instance is thawed and ends with its gateway; the watchdog goes too', async (t) => {
    const file = join(await openTempDir(t, 'tether-iso-'), 'services.yaml');
    await writeFile(
      file,
      serviceYaml('nap', {
        'serving.knative.dev/session-affinity-cookie': 'app',
        'autoscaling.knative.dev/target': '1',
        'serving.knative.dev/sandbox-idle-policy': 'pause',
        'serving.knative.dev/session-timeout': '500ms',
      }),
    );
    const stateDir = await openTempDir(t, 'tether-state-');
    const run = await runGateway([
      '--services',
      file,
      ...LOOPBACK_PORTS,
      '--state-dir',
      stateDir,
      '--isolation',
      'namespaces',
    ]);
    t.after(() => run.child.kill('SIGKILL'));
    const r = await send(run.publicUrl, { host: 'nap.default.example.com', headers: { cookie: 'app=z' } });
    assert.equal(r.status, 200, r.body);
    const inst = await waitFor('instance paused', async () => {
      const [i] = await adminJson<AdminInstance[]>(run, '/_tether/instances');
      return i?.state === 'paused' ? i : undefined;
    });
    const procs = processesOf(inst.name);
    assert.ok(procs.length > 0, 'the instance has processes');
    for (const p of procs) assert.equal(procState(p), 'D', `process ${p} frozen (cgroup freezer)`);
    const mine = childrenRunning(run.child.pid as number, WATCHDOG);
    assert.equal(mine.length, 1, 'one thaw watchdog, started by the first pause');
    const watchdog = mine[0] as number;

    run.child.kill('SIGKILL');
    await once(run.child, 'exit');
    await waitFor('the frozen instance gone with its gateway', () => processesOf(inst.name).length === 0);
    await waitFor('the watchdog and all of its session gone', () => sessionMembers(watchdog).length === 0);
  });
});

/**
 * A paused isolated instance ends with its gateway too. Frozen processes act on no signal, so
 * bubblewrap's `--die-with-parent` kill would wait for a thaw that never comes; the thaw watchdog
 * (src/runtime/local/isolation/thaw-watchdog.ts) thaws them when the gateway is SIGKILLed, and goes
 * itself. Needs root (network namespaces, cgroups), as the other isolation tests.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type AdminInstance, procState, send, serviceYaml, waitFor } from '../gateway/helpers/harness.ts';
import { openTempDir, processesOf } from '../runtime/local/isolation/helpers.ts';
import { adminJson, LOOPBACK_PORTS, runGateway } from './helpers/gateway-process.ts';

/** Pids of thaw watchdogs whose parent is `pid` or that outlived it (reparented). */
function watchdogs(): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        return readFileSync(`/proc/${e}/cmdline`, 'utf8').includes('list=$(cat)');
      } catch {
        return false;
      }
    })
    .map(Number);
}

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
    const before = new Set(watchdogs());
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
    const mine = watchdogs().filter((p) => !before.has(p));
    assert.equal(mine.length, 1, 'one thaw watchdog, started by the first pause');

    run.child.kill('SIGKILL');
    await once(run.child, 'exit');
    await waitFor('the frozen instance gone with its gateway', () => processesOf(inst.name).length === 0, {
      timeoutMs: 10_000,
    });
    await waitFor('the watchdog gone', () => !watchdogs().includes(mine[0] as number));
  });
});

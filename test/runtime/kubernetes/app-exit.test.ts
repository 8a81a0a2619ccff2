/**
 * `appEnded` (src/runtime/kubernetes/app-exit.ts) on Sandbox and Pod objects as the API server shows them: a
 * pod Failed/Succeeded, a Sandbox Finished, a container terminated or in CrashLoopBackOff, a restart since the
 * app was seen ready; and what is not an end (a running container that crashed once before, another pod).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeResource } from '../../../src/kube/types.ts';
import { appEnded, ownPod, readyMark } from '../../../src/runtime/kubernetes/app-exit.ts';

const sandbox = (conditions: object[] = []): KubeResource => ({
  apiVersion: 'agents.x-k8s.io/v1beta1',
  kind: 'Sandbox',
  metadata: { name: 'sb', namespace: 'agents', uid: 'sb-uid', generation: 1 },
  status: { conditions },
});
const crash = { exitCode: 3, reason: 'Error', startedAt: '2026-01-01T00:00:00Z', finishedAt: '2026-01-01T00:00:01Z' };
const pod = (status: Record<string, unknown>, uid = 'pod-1'): KubeResource => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'sb',
    namespace: 'agents',
    uid,
    ownerReferences: [
      { apiVersion: 'agents.x-k8s.io/v1beta1', kind: 'Sandbox', name: 'sb', uid: 'sb-uid', controller: true },
    ],
  },
  status,
});
const running = (restartCount = 0, lastState = {}) =>
  pod({
    phase: 'Running',
    containerStatuses: [{ name: 'app', restartCount, state: { running: { startedAt: 'x' } }, lastState }],
  });

describe('appEnded', () => {
  it('sees a container crash-looping or terminated, with its exit code', () => {
    const looping = pod({
      phase: 'Running',
      containerStatuses: [
        {
          name: 'app',
          restartCount: 1,
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: { terminated: crash },
        },
      ],
    });
    assert.deepEqual(appEnded(sandbox(), looping), {
      code: 3,
      reason: 'container app crash-looping (Error, exit code 3)',
    });
    const ended = pod({
      phase: 'Failed',
      containerStatuses: [{ name: 'app', restartCount: 0, state: { terminated: crash } }],
    });
    assert.equal(appEnded(sandbox(), ended)?.code, 3);
    assert.match(appEnded(sandbox(), ended)!.reason, /pod Failed/);
  });

  it('sees a Sandbox Finished even without its pod', () => {
    const finished = sandbox([{ type: 'Finished', status: 'True', reason: 'PodSucceeded', observedGeneration: 1 }]);
    assert.match(appEnded(finished, undefined)!.reason, /Finished \(PodSucceeded\)/);
  });

  it('counts a restart only against the mark of when the app was ready', () => {
    const before = running(0);
    const mark = readyMark(before)!;
    assert.equal(appEnded(sandbox(), before, mark), undefined);
    const after = running(1, { terminated: crash });
    assert.equal(appEnded(sandbox(), after, mark)?.code, 3);
    // Without a mark (a start waiting on a pool sandbox that crashed once and runs again): no end.
    assert.equal(appEnded(sandbox(), after), undefined);
    // Another pod (resumed sandbox): its restarts are not the marked one's.
    assert.equal(appEnded(sandbox(), { ...after, metadata: { ...after.metadata, uid: 'pod-2' } }, mark), undefined);
  });

  it('takes a pod only when the Sandbox is its controller', () => {
    const p = running();
    assert.equal(ownPod(sandbox(), p), p);
    const other = {
      ...p,
      metadata: { ...p.metadata, ownerReferences: [{ ...p.metadata.ownerReferences![0]!, uid: 'x' }] },
    };
    assert.equal(ownPod(sandbox(), other), undefined);
  });
});

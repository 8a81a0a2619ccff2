/**
 * The double's agent-sandbox controllers: a warm pool fills with Ready sandboxes whose pods are real
 * processes on their own loopback address; a claim adopts a Ready pool sandbox and the pool refills;
 * `Suspended` removes the pod, `Running` brings a new one (new address, new process); a container that exits
 * shows on its pod as the real kubelet writes it (CrashLoopBackOff and a restart under `restartPolicy: Always`,
 * phase Failed and a Finished Sandbox under `Never`).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { POD, SANDBOX, SANDBOX_CLAIM, SANDBOX_TEMPLATE, SANDBOX_WARM_POOL } from '../../src/kube/agent-sandbox.ts';
import { APP } from '../gateway/helpers/harness.ts';
import { type KubeDouble, startKubeDouble } from './double.ts';
import type { WireObject } from './objects.ts';

let kube: KubeDouble;
const NS = 'agents';
const PORT = 20_000 + Math.floor(Math.random() * 20_000);

const until = <T>(check: () => T | undefined) => kube.until('the controllers', check);

function get(host: string, path = '/env'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port: PORT, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function refused(host: string): Promise<void> {
  for (let i = 0; i < 250; i++) {
    try {
      await get(host);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`${host} still answers`);
}

const cond = (o: WireObject | undefined, type: string) =>
  (o?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.find(
    (c) => c.type === type,
  )?.status;
const ownedBy = (o: WireObject, owner: WireObject) =>
  o.metadata.ownerReferences?.some((r) => r.uid === owner.metadata.uid);

before(async () => {
  kube = await startKubeDouble({ controllers: true });
  kube.store.put(SANDBOX_TEMPLATE, {
    apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
    kind: 'SandboxTemplate',
    metadata: { name: 'app', namespace: NS, uid: 'tmpl-uid', resourceVersion: '', creationTimestamp: '' },
    spec: {
      podTemplate: {
        spec: {
          containers: [
            {
              name: 'app',
              image: 'session-app',
              command: ['node', APP],
              env: [{ name: 'PORT', value: String(PORT) }],
              ports: [{ containerPort: PORT }],
            },
          ],
        },
      },
    },
  });
  kube.store.put(SANDBOX_WARM_POOL, {
    apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
    kind: 'SandboxWarmPool',
    metadata: { name: 'app', namespace: NS, uid: 'pool-uid', resourceVersion: '', creationTimestamp: '' },
    spec: { replicas: 1, sandboxTemplateRef: { name: 'app' } },
  });
});
after(() => kube.close());

describe('SandboxController', () => {
  it('fills the pool, a claim adopts its Ready sandbox, the pool refills, suspend and resume swap the pod', async () => {
    const pool = kube.store.get(SANDBOX_WARM_POOL, NS, 'app')!;
    const warm = await until(() =>
      kube.store.list(SANDBOX, { namespace: NS }).find((s) => ownedBy(s, pool) && cond(s, 'Ready') === 'True'),
    );
    const warmIp = (warm.status as { podIPs: string[] }).podIPs[0]!;
    assert.match(warmIp, /^127\.\d+\.\d+\.\d+$/);
    assert.equal((await get(warmIp)).status, 200);

    const claim = kube.store.create(SANDBOX_CLAIM, {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxClaim',
      metadata: { name: 'run-1', namespace: NS, uid: '', resourceVersion: '', creationTimestamp: '' },
      spec: { warmPoolRef: { name: 'app' } },
    })!;
    const claimed = await until(() => {
      const c = kube.store.get(SANDBOX_CLAIM, NS, 'run-1');
      return cond(c, 'Ready') === 'True' ? c : undefined;
    });
    assert.equal(claimed.metadata.annotations?.['agents.x-k8s.io/sandbox-name'], warm.metadata.name);
    assert.deepEqual((claimed.status as { sandbox: unknown }).sandbox, { name: warm.metadata.name, podIPs: [warmIp] });
    const adopted = kube.store.get(SANDBOX, NS, warm.metadata.name)!;
    assert.equal(adopted.metadata.ownerReferences?.[0]?.uid, claim.metadata.uid);
    const refill = await until(() =>
      kube.store
        .list(SANDBOX, { namespace: NS })
        .find((s) => ownedBy(s, pool) && s.metadata.name !== warm.metadata.name && cond(s, 'Ready') === 'True'),
    );
    assert.ok(refill);

    kube.store.update(SANDBOX, { ...adopted, spec: { ...adopted.spec, operatingMode: 'Suspended' } });
    await until(() =>
      cond(kube.store.get(SANDBOX, NS, warm.metadata.name), 'Suspended') === 'True' ? true : undefined,
    );
    assert.equal(kube.store.get(SANDBOX, NS, warm.metadata.name)?.status?.podIPs, undefined);
    await assert.rejects(get(warmIp), /ECONNREFUSED/);

    const suspended = kube.store.get(SANDBOX, NS, warm.metadata.name)!;
    kube.store.update(SANDBOX, { ...suspended, spec: { ...suspended.spec, operatingMode: 'Running' } });
    const resumed = await until(() => {
      const s = kube.store.get(SANDBOX, NS, warm.metadata.name);
      return cond(s, 'Ready') === 'True' ? s : undefined;
    });
    const newIp = (resumed.status as { podIPs: string[] }).podIPs[0]!;
    assert.notEqual(newIp, warmIp);
    const after = JSON.parse((await get(newIp)).body);
    assert.equal(after.count, 1, 'a new process: the count starts again');
  });

  it('deletes a claim with its sandbox and pod process', async () => {
    const claim = kube.store.get(SANDBOX_CLAIM, NS, 'run-1')!;
    const sandboxName = claim.metadata.annotations!['agents.x-k8s.io/sandbox-name']!;
    const ip = (kube.store.get(SANDBOX, NS, sandboxName)!.status as { podIPs: string[] }).podIPs[0]!;
    kube.store.delete(SANDBOX_CLAIM, NS, 'run-1');
    // The garbage collector removes the sandbox, then its pod.
    await until(() =>
      kube.store.get(SANDBOX, NS, sandboxName) || kube.store.get(POD, NS, sandboxName) ? undefined : true,
    );
    // The process gets SIGTERM once its Pod object is gone: a bounded wait for the port to close.
    await refused(ip);
  });

  it('shows an exited container as the kubelet does: crash-looping and restarted (Always), or Failed and Finished (Never)', async () => {
    type Status = {
      phase: string;
      containerStatuses: {
        restartCount: number;
        state: { waiting?: { reason: string }; running?: unknown; terminated?: { exitCode: number; reason: string } };
        lastState: { terminated?: { exitCode: number; reason: string } };
      }[];
    };
    const sandboxOf = (name: string, restartPolicy?: string) =>
      kube.store.create(SANDBOX, {
        apiVersion: 'agents.x-k8s.io/v1beta1',
        kind: 'Sandbox',
        metadata: { name, namespace: NS, uid: '', resourceVersion: '', creationTimestamp: '' },
        spec: {
          operatingMode: 'Running',
          podTemplate: {
            spec: {
              ...(restartPolicy ? { restartPolicy } : {}),
              containers: [
                {
                  name: 'app',
                  image: 'x',
                  command: ['node', '-e', 'process.exit(3)'],
                  ports: [{ containerPort: PORT }],
                },
              ],
            },
          },
        },
      })!;
    const podStatus = (name: string) => kube.store.get(POD, NS, name)?.status as Status | undefined;

    sandboxOf('loops');
    const looping = await until(() => {
      const st = podStatus('loops');
      return st?.containerStatuses?.[0]?.state.waiting?.reason === 'CrashLoopBackOff' ? st : undefined;
    });
    assert.equal(looping.phase, 'Running', 'a pod whose container is restarted stays Running');
    assert.deepEqual(
      {
        exitCode: looping.containerStatuses[0]!.lastState.terminated?.exitCode,
        reason: looping.containerStatuses[0]!.lastState.terminated?.reason,
      },
      { exitCode: 3, reason: 'Error' },
    );
    assert.equal(cond(kube.store.get(SANDBOX, NS, 'loops'), 'Ready'), 'False');
    assert.equal(cond(kube.store.get(SANDBOX, NS, 'loops'), 'Finished'), undefined, 'not Finished: it restarts');

    sandboxOf('ends', 'Never');
    const failed = await until(() => (podStatus('ends')?.phase === 'Failed' ? podStatus('ends') : undefined));
    assert.equal(failed.containerStatuses[0]!.state.terminated?.exitCode, 3);
    const sb = await until(() => {
      const s = kube.store.get(SANDBOX, NS, 'ends');
      return cond(s, 'Finished') === 'True' ? s : undefined;
    });
    const ready = (sb.status as { conditions: { type: string; reason: string }[] }).conditions.find(
      (c) => c.type === 'Ready',
    );
    assert.equal(ready?.reason, 'PodFailed');
    kube.store.delete(SANDBOX, NS, 'loops');
    kube.store.delete(SANDBOX, NS, 'ends');
  });
});

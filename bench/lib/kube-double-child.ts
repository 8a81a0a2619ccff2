/**
 * @module
 * The Kubernetes API double with its agent-sandbox controllers and kubelet, in a process of its own, for
 * `bench/lib/gateway-kube.ts`: as in a real cluster the API server's work (object copies, pod process
 * spawns) does not run on the gateway's event loop. Talks over the IPC channel (`fork`): sends
 * `{ready, kubeconfig}` once, then a `{mark, at}` for each cluster event the bench times (absolute ms:
 * `performance.timeOrigin + performance.now()`), and answers `{id, call, args}` with `{id, result | error}`.
 */
import { SANDBOX, SANDBOX_CLAIM } from '../../src/kube/agent-sandbox.ts';
import { startKubeDouble } from '../../test/kube/double.ts';
import type { WireObject } from '../../test/kube/objects.ts';

const NAMESPACE = 'agents';
const send = (m: object) => process.send?.(m);
const now = () => performance.timeOrigin + performance.now();

const condition = (o: WireObject | undefined, type: string) =>
  (o?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.find(
    (c) => c.type === type,
  )?.status === 'True';

// A pod starts 100 ms after it is made, as on a node: the pool's refill spawns its process after the
// measured request, not inside it.
const kube = await startKubeDouble({ controllers: true, podStartDelayMs: 100 });

// When the cluster did what, from the store's own events: a claim created and bound; after a suspend, a
// Sandbox's `Running` written and its Ready again.
const claimMarks = new Set<string>();
const resumes = new Map<string, 'suspended' | 'running'>();
kube.store.subscribe((e) => {
  const o = e.object;
  const name = o.metadata.name;
  if (e.resource.startsWith('sandboxclaims.')) {
    const key = o.metadata.annotations?.['agents.x-k8s.io/sandbox-name'] ? `bound:${name}` : `created:${name}`;
    if (e.type !== 'DELETED' && !claimMarks.has(key)) {
      claimMarks.add(key);
      send({ mark: key, at: now() });
    }
  }
  if (e.resource.startsWith('sandboxes.')) {
    const mode = (o.spec as { operatingMode?: string } | undefined)?.operatingMode;
    const step = resumes.get(name);
    if (mode === 'Suspended' && condition(o, 'Suspended')) resumes.set(name, 'suspended');
    else if (mode === 'Running' && step === 'suspended') {
      resumes.set(name, 'running');
      send({ mark: `running:${name}`, at: now() });
    } else if (step === 'running' && condition(o, 'Ready') && !condition(o, 'Suspended')) {
      resumes.delete(name);
      send({ mark: `ready:${name}`, at: now() });
    }
  }
});

const calls: Record<string, (...args: never[]) => unknown> = {
  setLatency: (ms: number) => kube.setLatency(ms),
  /** Pod IPs of the pool's Ready sandboxes, in name order. */
  readyPool: (pool: string) =>
    kube.store
      .list(SANDBOX, { namespace: NAMESPACE, labelSelector: `agents.x-k8s.io/pool=${pool}` })
      .filter((s) => s.metadata.ownerReferences?.[0]?.kind === 'SandboxWarmPool' && condition(s, 'Ready'))
      .map((s) => (s.status as { podIPs: string[] }).podIPs[0]),
  /** Claims (name and bound sandbox), optionally by label selector. */
  claims: (labelSelector?: string) =>
    kube.store.list(SANDBOX_CLAIM, { namespace: NAMESPACE, labelSelector }).map((c) => ({
      name: c.metadata.name,
      sandbox: c.metadata.annotations?.['agents.x-k8s.io/sandbox-name'],
    })),
  suspended: (sandbox: string) => condition(kube.store.get(SANDBOX, NAMESPACE, sandbox), 'Suspended'),
  deleteClaim: (name: string) => kube.deleteClaim(name, { namespace: NAMESPACE }),
  /** API calls answered so far, watches aside (each waited the added latency once). */
  calls: () => kube.calls.filter((c) => c.verb !== 'watch').length,
};

process.on('message', (m: { id: number; call: string; args: never[] }) => {
  try {
    const fn = calls[m.call];
    if (!fn) throw new Error(`no call ${m.call}`);
    send({ id: m.id, result: fn(...m.args) ?? null });
  } catch (err) {
    send({ id: m.id, error: (err as Error).message });
  }
});
// The bench ends (or dies): so does the cluster, its pods with it.
process.on('disconnect', () => {
  void kube.close().then(() => process.exit(0));
});
send({ ready: true, kubeconfig: kube.gatewayKubeconfigPath });

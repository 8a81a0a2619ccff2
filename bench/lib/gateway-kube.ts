/**
 * @module
 * `npm run bench:gateway -- --runtime kubernetes`: the gateway on its Kubernetes runtime against the API
 * double and its agent-sandbox controllers (pods are local processes). Two figures, each beside what is not
 * the gateway's, measured in the same run: the cluster's own time, read from the double's store events
 * (claim created -> bound to a Ready sandbox; `Running` written -> Sandbox Ready), and the first request of a
 * fresh pod asked directly (a pool pod the claim does not take). What is left is what the gateway adds.
 * Env: BENCH_SAMPLES (20), BENCH_KUBE_LATENCY_MS (delay the double adds to every API answer, 2).
 */
import { request } from 'node:http';
import { ManualClock, systemClock } from '../../src/common/clock.ts';
import { silentLogger } from '../../src/common/log.ts';
import { startGateway } from '../../src/gateway/gateway.ts';
import { parseManifestText } from '../../src/gateway/services/load-services.ts';
import { SANDBOX, SANDBOX_CLAIM } from '../../src/kube/agent-sandbox.ts';
import { loadKubeConfig } from '../../src/kube/client.ts';
import { createObjectClient } from '../../src/kube/object-client.ts';
import { KubernetesRuntime } from '../../src/runtime/kubernetes/kubernetes-runtime.ts';
import { startKubeDouble } from '../../test/kube/double.ts';
import type { WireObject } from '../../test/kube/objects.ts';
import { kubeServiceYaml, POD_PORT } from '../../test/runtime/kubernetes/helpers.ts';
import { summarize } from './stats.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20);
const API_LATENCY_MS = Number(process.env.BENCH_KUBE_LATENCY_MS ?? 2);
const WARMUP = 2;

const condition = (o: WireObject | undefined, type: string) =>
  (o?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.find(
    (c) => c.type === type,
  )?.status === 'True';

function firstByte(url: string, host: string, cookie: string): Promise<{ ms: number; status: number; pid: number }> {
  const u = new URL(url);
  return new Promise((ok, fail) => {
    const t0 = performance.now();
    const headers = { host, cookie };
    request({ host: u.hostname, port: u.port, path: '/env', agent: false, headers }, (res) => {
      const ms = performance.now() - t0;
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => ok({ ms, status: res.statusCode ?? 0, pid: Number(JSON.parse(body || '{}').pid) }));
    })
      .on('error', fail)
      .end();
  });
}

/** Runs the Kubernetes-runtime session benchmark and prints its table. */
export async function benchKubernetesSessions(): Promise<void> {
  // A pod starts 100 ms after it is made, as on a node: the pool's refill then spawns its process (in this
  // very process, blocking its event loop for a few ms) after the measured request, not inside it.
  const kube = await startKubeDouble({ controllers: true, podStartDelayMs: 100 });
  // An HTTP readiness probe, as production apps have: the kubelet's GET also pays the app's first-request cost
  // (lazy compilation, ~30 ms for node here), which is not the gateway's.
  const probe = '          readinessProbe:\n            httpGet:\n              path: /env\n';
  const yaml = [
    kubeServiceYaml(
      'warm',
      { 'serving.knative.dev/warm-pool': '2', 'serving.knative.dev/session-timeout': '30m' },
      probe,
    ),
    kubeServiceYaml(
      'pause',
      { 'serving.knative.dev/sandbox-idle-policy': 'pause', 'serving.knative.dev/session-timeout': '30m' },
      probe,
    ),
  ].join('---\n');
  const services = parseManifestText(yaml, '/bench/kube.yaml', { runtime: 'kubernetes' });
  const kubeconfig = loadKubeConfig({ kubeconfig: kube.gatewayKubeconfigPath });
  // Idle deadlines run on a manual clock: the bench pauses a session when it wants to, not after a wait.
  const clock = new ManualClock(systemClock.now());
  const runtime = new KubernetesRuntime({
    kubeconfig,
    client: createObjectClient(kubeconfig, 5000),
    namespace: 'agents',
    services,
    log: silentLogger(),
    clock,
  });
  await runtime.synced();
  const gw = await startGateway({
    services: services.map((s) => ({ ...s, warmPool: 0 })),
    runtime,
    port: 0,
    adminPort: 0,
    host: '127.0.0.1',
    log: silentLogger(),
    clock,
    claimSecret: 'b'.repeat(32),
  });
  // When the cluster did what: claim created / bound, Running written / Ready, from the store's own events.
  const marks = new Map<string, number>();
  const stop = kube.store.subscribe((e) => {
    const now = performance.now();
    const o = e.object;
    if (e.resource.startsWith('sandboxclaims.') && e.type === 'ADDED') marks.set(`created:${o.metadata.name}`, now);
    if (e.resource.startsWith('sandboxclaims.') && o.metadata.annotations?.['agents.x-k8s.io/sandbox-name']) {
      if (!marks.has(`bound:${o.metadata.name}`)) marks.set(`bound:${o.metadata.name}`, now);
    }
    if (e.resource.startsWith('sandboxes.')) {
      const mode = (o.spec as { operatingMode?: string } | undefined)?.operatingMode;
      if (mode === 'Running' && marks.has(`suspended:${o.metadata.name}`) && !marks.has(`running:${o.metadata.name}`)) {
        marks.set(`running:${o.metadata.name}`, now);
      }
      if (condition(o, 'Ready') && marks.has(`running:${o.metadata.name}`) && !marks.has(`ready:${o.metadata.name}`)) {
        marks.set(`ready:${o.metadata.name}`, now);
      }
    }
  });
  const until = (what: string, check: () => boolean) => kube.until(what, () => (check() ? true : undefined), 30_000);
  try {
    kube.setLatency(API_LATENCY_MS);
    console.log(
      `\ntether gateway bench, --runtime kubernetes (API double + agent-sandbox controller simulation, ${API_LATENCY_MS} ms added to every API answer)`,
    );
    const pool = () =>
      kube.store
        .list(SANDBOX, { namespace: 'agents', labelSelector: 'agents.x-k8s.io/pool=warm' })
        .filter((s) => s.metadata.ownerReferences?.[0]?.kind === 'SandboxWarmPool' && condition(s, 'Ready'));
    const warm = { total: [] as number[], cluster: [] as number[], direct: [] as number[] };
    // Two unrecorded rounds first (TLS to the API, JIT), as the local figures warm up too.
    for (let i = -WARMUP; i < SAMPLES; i++) {
      await until('a full warm pool', () => pool().length >= 2);
      // Baseline: the first request of a fresh pod, straight to its address. The controller adopts pool
      // sandboxes in name order, so the last one is not the one the gateway's claim takes next.
      const spare = pool().at(-1)!;
      const ip = (spare.status as { podIPs: string[] }).podIPs[0]!;
      const direct = (await firstByte(`http://${ip}:${POD_PORT}/`, 'direct', 'app=direct')).ms;
      const before = new Set(kube.store.list(SANDBOX_CLAIM, { namespace: 'agents' }).map((c) => c.metadata.name));
      const r = await firstByte(gw.publicUrl, 'warm.default.example.com', `app=w${i}`);
      if (r.status !== 200) throw new Error(`warm session answered ${r.status}`);
      const claim = kube.store.list(SANDBOX_CLAIM, { namespace: 'agents' }).find((c) => !before.has(c.metadata.name));
      const name = claim?.metadata.name ?? '';
      if (i < 0) continue;
      warm.direct.push(direct);
      warm.total.push(r.ms);
      warm.cluster.push((marks.get(`bound:${name}`) ?? Number.NaN) - (marks.get(`created:${name}`) ?? Number.NaN));
    }

    // The same baseline for resume: a resumed sandbox runs a fresh pod.
    const resume = { total: [] as number[], cluster: [] as number[], direct: warm.direct };
    const first = await firstByte(gw.publicUrl, 'pause.default.example.com', 'app=p');
    const claim = kube.store.list(SANDBOX_CLAIM, {
      namespace: 'agents',
      labelSelector: 'tether.dev/service=pause',
    })[0]!;
    const sandbox = claim.metadata.annotations!['agents.x-k8s.io/sandbox-name']!;
    let pid = first.pid;
    for (let i = -WARMUP; i < SAMPLES; i++) {
      clock.advance(31 * 60_000);
      gw.reconcile();
      await until('suspended', () => condition(kube.store.get(SANDBOX, 'agents', sandbox), 'Suspended'));
      for (const k of ['running', 'ready']) marks.delete(`${k}:${sandbox}`);
      marks.set(`suspended:${sandbox}`, performance.now());
      const r = await firstByte(gw.publicUrl, 'pause.default.example.com', 'app=p');
      if (r.status !== 200 || r.pid === pid) throw new Error(`resume answered ${r.status} from pid ${r.pid}`);
      pid = r.pid;
      if (i < 0) continue;
      resume.total.push(r.ms);
      resume.cluster.push(
        (marks.get(`ready:${sandbox}`) ?? Number.NaN) - (marks.get(`running:${sandbox}`) ?? Number.NaN),
      );
    }

    const f = (n: number) => n.toFixed(1).padStart(6);
    const row = (label: string, m: { total: number[]; cluster: number[]; direct: number[] }) => {
      const t = summarize(m.total);
      const c = summarize(m.cluster);
      const d = summarize(m.direct);
      const added = summarize(m.total.map((v, i) => v - (m.cluster[i] ?? Number.NaN) - (m.direct[i] ?? Number.NaN)));
      console.log(
        `  ${label.padEnd(27)}${f(t.p50)} ${f(t.p99)}  |${f(c.p50)} ${f(c.p99)}  |${f(d.p50)} ${f(d.p99)}  |${f(added.p50)} ${f(added.p99)}`,
      );
    };
    console.log(`\nsession latencies, ms (${SAMPLES} samples each; every API answer delayed ${API_LATENCY_MS} ms)`);
    console.log("                               first byte    | cluster's own  | fresh pod direct | gateway adds");
    console.log('                                p50    p99   |   p50    p99   |   p50    p99    |   p50    p99');
    row('new session from warm pool', warm);
    row('resume from Suspended', resume);
    console.log("  cluster: claim created -> bound, Running written -> Ready (the double's store events);");
    console.log('  fresh pod direct: first request of a new pod straight to its IP. target: gateway adds <= 10 ms p99');
  } finally {
    stop();
    await gw.close();
    await kube.close();
  }
}

/**
 * @module
 * `npm run bench:gateway -- --runtime kubernetes`: the gateway on its Kubernetes runtime against the API
 * double and its agent-sandbox controllers (pods are local processes), which run in a child process of their
 * own (`kube-double-child.ts`), as an API server runs apart from the gateway. Two figures, each beside what is not
 * the gateway's, measured in the same run: the cluster's own time, read from the double's store events
 * (claim created -> bound to a Ready sandbox; `Running` written -> Sandbox Ready), and the first request of a
 * fresh pod asked directly (a pool pod the claim does not take). What is left is what the gateway adds.
 * Env: BENCH_SAMPLES (20), BENCH_KUBE_LATENCY_MS (delay the double adds to every API answer, 2).
 */
import { fork } from 'node:child_process';
import { request } from 'node:http';
import { pickSessionStore } from '../../src/cli/drivers.ts';
import { ManualClock, systemClock } from '../../src/common/clock.ts';
import { silentLogger } from '../../src/common/log.ts';
import { startGateway } from '../../src/gateway/gateway.ts';
import { parseManifestText } from '../../src/gateway/services/load-services.ts';
import { runtimeServiceSpecs } from '../../src/gateway/services/runtime-spec.ts';
import { loadKubeConfig } from '../../src/kube/client.ts';
import { createObjectClient } from '../../src/kube/object-client.ts';
import { KubernetesRuntime } from '../../src/runtime/kubernetes/kubernetes-runtime.ts';
import { kubeServiceYaml, POD_PORT } from '../../test/runtime/kubernetes/helpers.ts';
import { summarize } from './stats.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20);
const API_LATENCY_MS = Number(process.env.BENCH_KUBE_LATENCY_MS ?? 2);
const WARMUP = 2;

/** The cluster in its child process: its calls, its event marks (absolute ms), and a bounded wait. */
interface ChildCluster {
  kubeconfig: string;
  call<T>(name: string, ...args: unknown[]): Promise<T>;
  marks: Map<string, number>;
  until(what: string, check: () => Promise<boolean>): Promise<void>;
  close(): void;
}

async function startChildCluster(): Promise<ChildCluster> {
  const child = fork(new URL('./kube-double-child.ts', import.meta.url), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const marks = new Map<string, number>();
  const pending = new Map<number, { ok: (v: unknown) => void; fail: (e: Error) => void }>();
  let next = 0;
  const kubeconfig = await new Promise<string>((ok, fail) => {
    child.once('exit', (code) => fail(new Error(`the API double exited (${code}) before it was ready`)));
    child.on(
      'message',
      (m: {
        ready?: true;
        kubeconfig?: string;
        mark?: string;
        at?: number;
        id?: number;
        result?: unknown;
        error?: string;
      }) => {
        if (m.ready) ok(m.kubeconfig as string);
        else if (m.mark !== undefined) marks.set(m.mark, m.at as number);
        else if (m.id !== undefined) {
          const p = pending.get(m.id);
          pending.delete(m.id);
          if (m.error) p?.fail(new Error(m.error));
          else p?.ok(m.result);
        }
      },
    );
  });
  const call = <T>(name: string, ...args: unknown[]) =>
    new Promise<T>((ok, fail) => {
      const id = next++;
      pending.set(id, { ok: ok as (v: unknown) => void, fail });
      child.send({ id, call: name, args });
    });
  return {
    kubeconfig,
    call,
    marks,
    // Polled every 5 ms, at most 30 s: the cluster is in another process.
    async until(what, check) {
      for (let i = 0; i < 6000; i++) {
        if (await check()) return;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      throw new Error(`${what}: not within 30 s`);
    },
    close: () => child.disconnect(),
  };
}

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
  const kube = await startChildCluster();
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
  const kubeconfig = loadKubeConfig({ kubeconfig: kube.kubeconfig });
  // Idle deadlines run on a manual clock: the bench pauses a session when it wants to, not after a wait.
  const clock = new ManualClock(systemClock.now());
  const runtime = new KubernetesRuntime({
    kubeconfig,
    client: createObjectClient(kubeconfig, 5000),
    namespace: 'agents',
    services: runtimeServiceSpecs(services),
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
    sessionStore: pickSessionStore({ sessionStore: 'memory', redisPrefix: 'tether:' }, silentLogger(), { clock }),
  });
  const marks = kube.marks;
  const until = kube.until;
  try {
    await kube.call('setLatency', API_LATENCY_MS);
    console.log(
      `\ntether gateway bench, --runtime kubernetes (API double + agent-sandbox controller simulation, ${API_LATENCY_MS} ms added to every API answer)`,
    );
    const pool = () => kube.call<string[]>('readyPool', 'warm');
    const claimNames = async () => new Set((await kube.call<{ name: string }[]>('claims')).map((c) => c.name));
    const warm = { total: [] as number[], cluster: [] as number[], direct: [] as number[], api: [] as number[] };
    // Two unrecorded rounds first (TLS to the API, JIT), as the local figures warm up too.
    for (let i = -WARMUP; i < SAMPLES; i++) {
      await until('a full warm pool', async () => (await pool()).length >= 2);
      // Baseline: the first request of a fresh pod, straight to its address. The controller adopts pool
      // sandboxes in name order, so the last one is not the one the gateway's claim takes next.
      const ip = (await pool()).at(-1)!;
      const direct = (await firstByte(`http://${ip}:${POD_PORT}/`, 'direct', 'app=direct')).ms;
      const before = await claimNames();
      const callsBefore = await kube.call<number>('calls');
      const r = await firstByte(gw.publicUrl, 'warm.default.example.com', `app=w${i}`);
      if (r.status !== 200) throw new Error(`warm session answered ${r.status}`);
      const apiCalls = (await kube.call<number>('calls')) - callsBefore;
      const name = [...(await claimNames())].find((c) => !before.has(c)) ?? '';
      // Each sample's session ends (its claim deleted, its pod process stopped), so every sample meets a
      // cluster of the same size: left running, 40 idle pods and their probes slowed every later sample.
      if (name) await kube.call('deleteClaim', name);
      if (i < 0) continue;
      await until('the bound mark', async () => marks.has(`bound:${name}`));
      warm.direct.push(direct);
      warm.total.push(r.ms);
      warm.api.push(apiCalls * API_LATENCY_MS);
      warm.cluster.push((marks.get(`bound:${name}`) ?? Number.NaN) - (marks.get(`created:${name}`) ?? Number.NaN));
    }

    // The same baseline for resume: a resumed sandbox runs a fresh pod.
    const resume = { total: [] as number[], cluster: [] as number[], direct: warm.direct, api: [] as number[] };
    const first = await firstByte(gw.publicUrl, 'pause.default.example.com', 'app=p');
    const [claim] = await kube.call<{ name: string; sandbox: string }[]>('claims', 'tether.dev/service=pause');
    const sandbox = claim!.sandbox;
    let pid = first.pid;
    for (let i = -WARMUP; i < SAMPLES; i++) {
      clock.advance(31 * 60_000);
      gw.reconcile();
      await until('suspended', () => kube.call<boolean>('suspended', sandbox));
      for (const k of ['running', 'ready']) marks.delete(`${k}:${sandbox}`);
      const callsBefore = await kube.call<number>('calls');
      const r = await firstByte(gw.publicUrl, 'pause.default.example.com', 'app=p');
      const apiCalls = (await kube.call<number>('calls')) - callsBefore;
      if (r.status !== 200 || r.pid === pid) throw new Error(`resume answered ${r.status} from pid ${r.pid}`);
      pid = r.pid;
      if (i < 0) continue;
      resume.total.push(r.ms);
      resume.api.push(apiCalls * API_LATENCY_MS);
      // The ready mark may trail the answer by an IPC hop: wait for it (bounded).
      await until('the ready mark', async () => marks.has(`ready:${sandbox}`));
      resume.cluster.push(
        (marks.get(`ready:${sandbox}`) ?? Number.NaN) - (marks.get(`running:${sandbox}`) ?? Number.NaN),
      );
    }

    const f = (n: number) => n.toFixed(1).padStart(6);
    const row = (label: string, m: { total: number[]; cluster: number[]; direct: number[]; api: number[] }) => {
      const t = summarize(m.total);
      const c = summarize(m.cluster);
      const d = summarize(m.direct);
      const a = summarize(m.api);
      const added = summarize(
        m.total.map((v, i) => v - (m.cluster[i] ?? Number.NaN) - (m.direct[i] ?? Number.NaN) - (m.api[i] ?? 0)),
      );
      console.log(
        `  ${label.padEnd(27)}${f(t.p50)} ${f(t.p99)}  |${f(c.p50)} ${f(c.p99)}  |${f(a.p50)} ${f(a.p99)}  |${f(d.p50)} ${f(d.p99)}  |${f(added.p50)} ${f(added.p99)}`,
      );
    };
    console.log(`\nsession latencies, ms (${SAMPLES} samples each; every API answer delayed ${API_LATENCY_MS} ms)`);
    console.log(
      "                               first byte    | cluster's own  | API latency    | fresh pod direct | gateway adds",
    );
    console.log(
      '                                p50    p99   |   p50    p99   |   p50    p99   |   p50    p99    |   p50    p99',
    );
    row('new session from warm pool', warm);
    row('resume from Suspended', resume);
    console.log("  cluster: claim created -> bound, Running written -> Ready (the double's store events);");
    console.log(
      `  API latency: the gateway's API calls during the request x ${API_LATENCY_MS} ms added to each answer;`,
    );
    console.log('  fresh pod direct: first request of a new pod straight to its IP. target: gateway adds <= 10 ms p99');
  } finally {
    await gw.close();
    kube.close();
  }
}

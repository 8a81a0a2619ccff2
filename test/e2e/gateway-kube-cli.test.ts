/**
 * `tether gateway --runtime kubernetes` as a process against the API double (with its agent-sandbox
 * controllers): it makes the service's SandboxTemplate and SandboxWarmPool, serves a session from a claim,
 * refuses a manifest without an image, answers 503 + Retry-After at its cluster-wait deadline while the
 * controllers are down, and on SIGTERM exits 0 leaving the claim for the next gateway.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SANDBOX_CLAIM, SANDBOX_TEMPLATE, SANDBOX_WARM_POOL } from '../../src/kube/agent-sandbox.ts';
import { send, serviceYaml, waitFor, writeManifest } from '../gateway/helpers/harness.ts';
import { type KubeDouble, startKubeDouble } from '../kube/double.ts';
import { kubeServiceYaml } from '../runtime/kubernetes/helpers.ts';
import { LOOPBACK_PORTS } from './helpers/gateway-process.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = resolve(ROOT, 'test/gateway/helpers/gateway-cli.ts');
let kube: KubeDouble;
/** Bound on a gateway's start (seconds through tsx, many more on a loaded machine; the start is not tested). */
const START_MS = 120_000;

before(async () => {
  kube = await startKubeDouble({ controllers: true });
});
after(() => kube.close());

function runCli(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'gateway', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      ...env,
      TETHER_LOG_LEVEL: 'info',
      TETHER_CLAIM_SECRET: 'c'.repeat(64),
      TETHER_SESSION_SECRET: 's'.repeat(64),
    },
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c) => {
    out += c;
  });
  child.stderr?.on('data', (c) => {
    err += c;
  });
  return { child, out: () => out, err: () => err };
}

const kubeArgs = (file: string) => [
  '--services',
  file,
  '--runtime',
  'kubernetes',
  '--kubeconfig',
  kube.gatewayKubeconfigPath,
  '--namespace',
  'agents',
  '--memory-url',
  'http://tether-memory.tether.svc.cluster.local:8080',
  ...LOOPBACK_PORTS,
];

describe('tether gateway --runtime kubernetes (command line)', () => {
  it('serves a session from a SandboxClaim and leaves the claim behind on SIGTERM', async (t) => {
    const file = await writeManifest(t, kubeServiceYaml('cli', { 'serving.knative.dev/warm-pool': '1' }));
    // A generous wait for the sandbox (its deadline is the next test's subject, not this one's): under load the
    // double's controllers and pod start take longer than the default 30 s.
    const run = runCli([...kubeArgs(file), '--queue-timeout', '120s']);
    t.after(() => run.child.kill('SIGKILL'));
    const line = await waitFor(
      'listening line',
      () =>
        run
          .out()
          .split('\n')
          .find((l) => l.includes('gateway listening')),
      { timeoutMs: START_MS },
    );
    const { publicUrl } = JSON.parse(line) as { publicUrl: string };
    const r = await send(publicUrl, { host: 'cli.default.example.com', path: '/env', headers: { cookie: 'app=c1' } });
    assert.equal(r.status, 200, r.body);
    assert.doesNotMatch(run.out(), /image is ignored/);
    const template = kube.store.get(SANDBOX_TEMPLATE, 'agents', 'cli')!;
    const env = (template.spec as any).podTemplate.spec.containers[0].env as { name: string; value: string }[];
    assert.ok(env.some((e) => e.name === 'TETHER_URL' && e.value.startsWith('http://tether-memory.tether')));
    assert.equal((kube.store.get(SANDBOX_WARM_POOL, 'agents', 'cli')!.spec as any).replicas, 1);
    run.child.kill('SIGTERM');
    const [code] = await once(run.child, 'exit');
    assert.equal(code, 0);
    assert.equal(kube.store.list(SANDBOX_CLAIM, { namespace: 'agents' }).length, 1);
  });

  it('gives 503 + Retry-After at TETHER_CLUSTER_WAIT_TIMEOUT while the controllers are down, naming the claim in its log', async (t) => {
    const file = await writeManifest(t, kubeServiceYaml('cliwait', {}));
    const run = runCli(kubeArgs(file), { TETHER_CLUSTER_WAIT_TIMEOUT: '1s' });
    t.after(() => run.child.kill('SIGKILL'));
    const line = await waitFor(
      'listening line',
      () =>
        run
          .out()
          .split('\n')
          .find((l) => l.includes('gateway listening')),
      { timeoutMs: START_MS },
    );
    const { publicUrl } = JSON.parse(line) as { publicUrl: string };
    kube.controller!.halt();
    try {
      const r = await send(publicUrl, { host: 'cliwait.default.example.com', headers: { cookie: 'app=w1' } });
      assert.equal(r.status, 503, r.body);
      assert.match(String(r.headers['retry-after']), /^\d+$/);
      await waitFor(
        'the log line',
        () => /claim cliwait-[0-9a-f]{32} not bound after 1 s/.test(run.out()) || undefined,
      );
    } finally {
      kube.controller!.proceed();
    }
    run.child.kill('SIGTERM');
    await once(run.child, 'exit');
  });

  it('refuses a --cluster-wait-timeout of 0 before anything else, naming the flag', async () => {
    const run = runCli(['--services', 'x.yaml', '--cluster-wait-timeout', '0s']);
    const [code] = await once(run.child, 'exit');
    assert.notEqual(code, 0);
    assert.match(run.err(), /--cluster-wait-timeout: must be more than 0/);
  });

  it('refuses a service without an image, naming the field, before serving', async (t) => {
    const file = await writeManifest(t, serviceYaml('noimg', {}));
    const run = runCli(kubeArgs(file));
    t.after(() => run.child.kill('SIGKILL'));
    const [code] = await once(run.child, 'exit');
    assert.equal(code, 1);
    assert.match(run.err(), /containers\[0\]\.image: is required by the Kubernetes runtime/);
  });
});

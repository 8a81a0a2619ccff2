/**
 * @module
 * Test helpers for the Kubernetes runtime: a service manifest for the session app with an image and a
 * random container port, a gateway whose runtime is `KubernetesRuntime` against the API double (with its
 * controllers), and `untilStore`, which waits on the double's store writes instead of sleeping.
 */
import type { TestContext } from 'node:test';
import { ManualClock } from '../../../src/common/clock.ts';
import { silentLogger } from '../../../src/common/log.ts';
import { type Gateway, type GatewayOptions, startGateway } from '../../../src/gateway/gateway.ts';
import { parseManifestText } from '../../../src/gateway/services/load-services.ts';
import { runtimeServiceSpecs } from '../../../src/gateway/services/runtime-spec.ts';
import { SANDBOX_CLAIM } from '../../../src/kube/agent-sandbox.ts';
import { loadKubeConfig } from '../../../src/kube/client.ts';
import { createObjectClient } from '../../../src/kube/object-client.ts';
import { KubernetesRuntime } from '../../../src/runtime/kubernetes/kubernetes-runtime.ts';
import { LABELS } from '../../../src/runtime/kubernetes/objects.ts';
import { serviceYaml, testGatewayDrivers } from '../../gateway/helpers/harness.ts';
import type { KubeDouble } from '../../kube/double.ts';

/** A random container port for this test file (each pod has its own address, so one port serves all). */
export const POD_PORT = 20_000 + Math.floor(Math.random() * 20_000);

/** The session app as a Knative service with an image and a container port (and `extra` container lines). */
export function kubeServiceYaml(name: string, annotations: Record<string, string>, extra = ''): string {
  return serviceYaml(name, { 'serving.knative.dev/session-affinity-cookie': 'app', ...annotations }).concat(
    `          image: "tether-session-app:dev"\n          ports:\n            - containerPort: ${POD_PORT}\n${extra}`,
  );
}

/** A gateway on the Kubernetes runtime, closed after the test. */
export interface KubeGateway {
  gw: Gateway;
  runtime: KubernetesRuntime;
  clock: ManualClock;
  host: (service: string) => string;
}

/** Starts a gateway with `KubernetesRuntime` against `kube` (namespace `agents`), its claims in sync. */
export async function startKubeGateway(
  t: TestContext,
  kube: KubeDouble,
  yaml: string,
  options: Partial<GatewayOptions> & { requestTimeoutMs?: number; operationTimeoutMs?: number } = {},
): Promise<KubeGateway> {
  const clock = (options.clock as ManualClock | undefined) ?? new ManualClock(Date.now());
  const services = parseManifestText(yaml, '/tmp/kube-test.yaml', { runtime: 'kubernetes' });
  const kubeconfig = loadKubeConfig({ kubeconfig: kube.gatewayKubeconfigPath });
  const runtime = new KubernetesRuntime({
    kubeconfig,
    // The longest allowed: the double answers at once, so only a loaded machine is late; tests of it set theirs.
    client: createObjectClient(kubeconfig, options.requestTimeoutMs ?? 10_000),
    namespace: 'agents',
    services: runtimeServiceSpecs(services),
    log: silentLogger(),
    clock,
    operationTimeoutMs: options.operationTimeoutMs ?? 10_000,
    resyncMs: 200,
  });
  await runtime.synced();
  const gw = await startGateway({
    // The warm pool is the cluster's SandboxWarmPool: the gateway keeps none of its own.
    services: services.map((s) => ({ ...s, warmPool: 0 })),
    runtime,
    port: 0,
    adminPort: 0,
    host: '127.0.0.1',
    log: silentLogger(),
    reconcileIntervalMs: 50,
    startTimeoutMs: 10_000,
    queueTimeoutMs: 10_000,
    claimSecret: 'k'.repeat(32),
    ...options,
    sessionStore: options.sessionStore ?? testGatewayDrivers({ clock, runtime }).sessionStore,
    clock,
  });
  t.after(() => gw.close());
  return { gw, runtime, clock, host: (s) => `${s}.default.example.com` };
}

/** Resolves with the first value `check` returns, re-checked after every write to the double's store (10 s max). */
export function untilStore<T>(kube: KubeDouble, what: string, check: () => T | undefined): Promise<T> {
  return kube.until(what, check);
}

/** The claims of `service` in the sandbox namespace (`agents`), from the double's store. */
export function claimsOf(kube: KubeDouble, service: string) {
  return kube.store.list(SANDBOX_CLAIM, { namespace: 'agents', labelSelector: `${LABELS.service}=${service}` });
}

/**
 * The runtime conformance suite (test/runtime/conformance.ts) on the Kubernetes runtime against the API
 * double with its agent-sandbox controllers (each pod a local process on a loopback address of its own).
 * As kubernetes-runtime.ts documents: pause = Suspended, which deletes the pod (resume brings a new pod, a
 * new address, the app's memory gone); claims outlive the runtime, so a restarted one lists and adopts
 * them; pids are null and logs are the cluster's. From outside, an instance ends when its claim is deleted;
 * its app exits when the double's kubelet kills its container (restarted after a back-off, as a real one
 * does: the runtime sees the crash on the pod); what it depends on is the API server, made to answer 500.
 */
import { after, before } from 'node:test';
import { ManualClock } from '../../../src/common/clock.ts';
import { silentLogger } from '../../../src/common/log.ts';
import { parseManifestText } from '../../../src/gateway/services/load-services.ts';
import { runtimeServiceSpecs } from '../../../src/gateway/services/runtime-spec.ts';
import { SANDBOX_CLAIM } from '../../../src/kube/agent-sandbox.ts';
import { loadKubeConfig } from '../../../src/kube/client.ts';
import { createObjectClient } from '../../../src/kube/object-client.ts';
import { KubernetesRuntime } from '../../../src/runtime/kubernetes/kubernetes-runtime.ts';
import { sandboxNameOf } from '../../../src/runtime/kubernetes/observed.ts';
import type { InstanceSpec } from '../../../src/runtime/runtime.ts';
import { waitFor } from '../../gateway/helpers/harness.ts';
import { type KubeDouble, startKubeDouble } from '../../kube/double.ts';
import { type RuntimeHarness, runtimeConformance } from '../conformance.ts';
import { kubeServiceYaml, POD_PORT } from './helpers.ts';

const NAMESPACE = 'agents';
// `conf` serves the session app; `conf-crash` exits at once (its sandbox never gets Ready).
const yaml = `${kubeServiceYaml('conf', {})}---
apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: conf-crash
spec:
  template:
    metadata:
      annotations:
        serving.knative.dev/workload-type: "sandbox"
    spec:
      containers:
        - command: ["node", "-e", "process.exit(3)"]
          image: "tether-session-app:dev"
          ports:
            - containerPort: ${POD_PORT}
`;
const services = runtimeServiceSpecs(parseManifestText(yaml, '/tmp/conformance.yaml', { runtime: 'kubernetes' }));

let kube: KubeDouble;
before(async () => {
  kube = await startKubeDouble({ controllers: true });
});
after(() => kube.close());

function spec(app: 'serve' | 'crash'): InstanceSpec {
  const service = app === 'serve' ? 'conf' : 'conf-crash';
  return {
    name: `${service}-${Math.random().toString(36).slice(2, 7)}`,
    service,
    configuration: service,
    revision: `${service}-00001`,
    argv: [], // the pod's command is the template's
    env: {},
    workingDir: '/',
    // Long: a crash-looping container must fail its start at once, and the suite checks it was not this timeout.
    startTimeoutMs: app === 'serve' ? 10_000 : 60_000,
  };
}

async function kubeHarness(): Promise<RuntimeHarness> {
  const kubeconfig = loadKubeConfig({ kubeconfig: kube.gatewayKubeconfigPath });
  return {
    capabilities: { pause: 'drops-process', adoptsAfterRestart: true, pids: false, logs: false },
    async open() {
      const runtime = new KubernetesRuntime({
        kubeconfig,
        client: createObjectClient(kubeconfig, 2000),
        namespace: NAMESPACE,
        services,
        log: silentLogger(),
        // Never advanced: the services' idle policy reaps no leftover claim during a case.
        clock: new ManualClock(Date.now()),
        operationTimeoutMs: 10_000,
        resyncMs: 200,
      });
      await runtime.synced();
      return runtime;
    },
    spec,
    async endOutside(started) {
      // No session: the claim is named after the instance.
      kube.store.delete(SANDBOX_CLAIM, NAMESPACE, started.name);
    },
    async exitApp(started) {
      const claim = kube.store.get(SANDBOX_CLAIM, NAMESPACE, started.name);
      const sandbox = claim && sandboxNameOf(claim);
      if (!sandbox || !kube.controller!.kubelet.killContainer(NAMESPACE, sandbox)) {
        throw new Error(`no running container for ${started.name}`);
      }
    },
    async gone(started) {
      // Pod addresses are loopback (127.100-199.x.x) under the double: asking there stays on this machine.
      if (!started.host.startsWith('127.')) throw new Error(`pod address ${started.host} is not loopback`);
      await waitFor(`the pod of ${started.name} to stop`, () =>
        fetch(`http://${started.host}:${started.port}/env`, { signal: AbortSignal.timeout(2000) }).then(
          () => false,
          () => true,
        ),
      );
    },
    dependency: {
      what: 'the API server',
      goDown: () => kube.goDown('error', 500),
      goUp: () => kube.goUp(),
    },
  };
}

runtimeConformance('kubernetes (agent-sandbox on the API double)', kubeHarness);

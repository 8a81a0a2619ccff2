/**
 * The mapping of a parsed Knative manifest into the runtime's `ServiceSpec` (src/gateway/services/runtime-spec.ts):
 * the container's fields as written (nothing resolved against the manifest's folder), absent fields left absent,
 * the idle rule from the session annotations; and the SandboxTemplate built from it carries the manifest's
 * container unchanged, as it did when the Kubernetes runtime read the manifest itself.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseManifestText } from '../../../src/gateway/services/load-services.ts';
import { runtimeServiceSpec } from '../../../src/gateway/services/runtime-spec.ts';
import { templateFor } from '../../../src/runtime/kubernetes/objects.ts';

const FULL = `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: agent
spec:
  template:
    metadata:
      name: agent-00007
      annotations:
        serving.knative.dev/workload-type: "sandbox"
        serving.knative.dev/warm-pool: "2"
        serving.knative.dev/session-timeout: "10m"
        serving.knative.dev/sandbox-idle-policy: "pause"
    spec:
      containers:
        - name: worker
          image: "registry.example/agent:1"
          command: ["node"]
          args: ["server.mjs", "--quiet"]
          workingDir: "srv"
          env:
            - name: MODE
              value: "fast"
            - name: EMPTY
          ports:
            - containerPort: 9000
          resources:
            limits:
              memory: "256Mi"
              cpu: "500m"
            requests:
              cpu: "100m"
          readinessProbe:
            httpGet:
              path: /ready
            periodSeconds: 2
`;

const MINIMAL = `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: bare
spec:
  template:
    spec:
      containers:
        - image: "registry.example/bare:1"
`;

const parse = (yaml: string) => parseManifestText(yaml, '/manifests/agent.yaml', { runtime: 'kubernetes' })[0]!;

describe('runtimeServiceSpec', () => {
  it('maps every container field as the manifest wrote it, and the idle rule', () => {
    assert.deepEqual(runtimeServiceSpec(parse(FULL)), {
      name: 'agent',
      configuration: 'agent',
      revision: 'agent-00007',
      container: {
        name: 'worker',
        image: 'registry.example/agent:1',
        command: ['node'],
        args: ['server.mjs', '--quiet'],
        workingDir: 'srv', // not resolved against /manifests: a pod resolves it in its image
        env: { MODE: 'fast', EMPTY: '' },
        port: 9000,
        resources: { limits: { memory: '256Mi', cpu: '500m' }, requests: { cpu: '100m' } },
        readinessProbe: { httpGet: { path: '/ready' }, periodSeconds: 2 },
      },
      warmPool: 2,
      idle: { afterMs: 10 * 60_000, policy: 'pause' },
    });
  });

  it('leaves absent fields absent (the image keeps its own entrypoint, the port its default)', () => {
    const spec = runtimeServiceSpec(parse(MINIMAL));
    assert.deepEqual(spec.container, { image: 'registry.example/bare:1', env: {} });
    assert.deepEqual(spec.idle, { afterMs: 30 * 60_000, policy: 'delete' });
    assert.equal(spec.warmPool, 0);
    assert.equal(spec.revision, 'bare-00001');
  });

  it('gives a SandboxTemplate whose container is the manifest one, with PORT and K_* added', () => {
    const template = templateFor(runtimeServiceSpec(parse(FULL)), { namespace: 'agents' });
    const pod = (template.spec as { podTemplate: { spec: { containers: Record<string, unknown>[] } } }).podTemplate;
    const c = pod.spec.containers[0]!;
    assert.equal(c.name, 'worker');
    assert.equal(c.image, 'registry.example/agent:1');
    assert.deepEqual(c.command, ['node']);
    assert.deepEqual(c.args, ['server.mjs', '--quiet']);
    assert.equal(c.workingDir, 'srv');
    assert.deepEqual(c.ports, [{ containerPort: 9000, protocol: 'TCP' }]);
    assert.deepEqual(c.resources, { limits: { memory: '256Mi', cpu: '500m' }, requests: { cpu: '100m' } });
    assert.deepEqual(c.readinessProbe, { httpGet: { path: '/ready' }, periodSeconds: 2 });
    const env = Object.fromEntries((c.env as { name: string; value: string }[]).map((e) => [e.name, e.value]));
    assert.deepEqual(
      { MODE: env.MODE, PORT: env.PORT, K_SERVICE: env.K_SERVICE, K_REVISION: env.K_REVISION },
      { MODE: 'fast', PORT: '9000', K_SERVICE: 'agent', K_REVISION: 'agent-00007' },
    );

    const bare = templateFor(runtimeServiceSpec(parse(MINIMAL)), { namespace: 'agents' });
    const b = (bare.spec as { podTemplate: { spec: { containers: Record<string, unknown>[] } } }).podTemplate.spec
      .containers[0]!;
    assert.equal(b.name, 'app');
    for (const absent of ['command', 'args', 'workingDir', 'resources', 'readinessProbe']) {
      assert.equal(absent in b, false, `${absent} absent`);
    }
    assert.deepEqual(b.ports, [{ containerPort: 8080, protocol: 'TCP' }]);
  });
});

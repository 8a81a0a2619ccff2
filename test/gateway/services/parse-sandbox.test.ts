import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseManifestText } from '../../../src/gateway/services/load-services.ts';
import { ManifestError } from '../../../src/gateway/services/service-config.ts';

function manifest(annotations: string, container: string): string {
  return `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: box
spec:
  template:
    metadata:
      annotations:
        serving.knative.dev/workload-type: "sandbox"
${annotations}
    spec:
      containers:
        - command: ["node", "app.js"]
${container}`;
}

describe('the sandbox side of a service manifest', () => {
  it('reads resources.limits (memory, cpu, tether.dev/pids) and the tether.dev annotations', () => {
    const [svc] = parseManifestText(
      manifest(
        '        tether.dev/read-only-paths: "../shared, /opt/models"\n        tether.dev/public-egress: "true"',
        '          resources:\n            limits:\n              memory: "256Mi"\n              cpu: "500m"\n              tether.dev/pids: "64"',
      ),
      '/m/box/service.yaml',
    );
    assert.deepEqual(svc?.container.sandbox, {
      readOnlyPaths: ['/m/shared', '/opt/models'],
      limits: { memoryBytes: 256 * 2 ** 20, cpuMillicores: 500, pids: 64 },
      publicEgress: true,
    });
  });

  it('has no limits, no extra paths and no egress by default', () => {
    const [svc] = parseManifestText(manifest('', ''), '/m/s.yaml');
    assert.deepEqual(svc?.container.sandbox, { readOnlyPaths: [], limits: {}, publicEgress: false });
  });

  it('names the field of a bad limit or annotation', () => {
    const cases: Array<[string, string, RegExp]> = [
      [
        '',
        '          resources:\n            limits:\n              memory: "lots"',
        /containers\[0\]\.resources\.limits\.memory/,
      ],
      ['', '          resources:\n            limits:\n              memory: "1Mi"', /at least 16Mi/],
      ['', '          resources:\n            limits:\n              cpu: "0"', /resources\.limits\.cpu/],
      ['', '          resources:\n            limits:\n              tether.dev/pids: "1.5"', /tether\.dev\/pids/],
      ['        tether.dev/public-egress: "yes"', '', /tether\.dev\/public-egress/],
    ];
    for (const [ann, container, field] of cases) {
      assert.throws(
        () => parseManifestText(manifest(ann, container), '/m/s.yaml'),
        (err: unknown) => err instanceof ManifestError && field.test(err.message),
        String(field),
      );
    }
  });
});

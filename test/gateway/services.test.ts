import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { DuplicateServiceError, loadServices, parseManifestText } from '../../src/gateway/services/load-services.ts';
import { ManifestError } from '../../src/gateway/services/service-config.ts';
import { serviceYaml } from './helpers/harness.ts';

const EXAMPLES = resolve(import.meta.dirname, '../../examples/services');

function refused(yaml: string, field: RegExp, document = 1): void {
  assert.throws(
    () => parseManifestText(yaml, '/m/bad.yaml'),
    (err: unknown) => {
      assert.ok(err instanceof ManifestError, String(err));
      assert.equal(err.file, '/m/bad.yaml');
      assert.equal(err.document, document);
      assert.match(err.field, field);
      assert.match(err.message, /^\/m\/bad\.yaml: document \d+: /);
      return true;
    },
  );
}

describe('loadServices()', () => {
  it('reads the two seed services from examples/services with all their annotations', async () => {
    const services = await loadServices(EXAMPLES);
    assert.deepEqual(
      services.map((s) => s.name),
      ['ai-agent-delete', 'ai-agent-pause'],
    );
    const [del, pause] = services;
    assert.equal(del?.idlePolicy, 'delete');
    assert.equal(del?.cookieName, 'app');
    assert.equal(del?.sessionTimeoutMs, 30 * 60_000);
    assert.equal(del?.sessionExpiryMs, null);
    assert.equal(del?.target, 1);
    assert.equal(del?.warmPool, 0);
    assert.equal(del?.maxScale, 10);
    assert.equal(pause?.maxScale, 10);
    assert.equal(pause?.idlePolicy, 'pause');
    assert.equal(pause?.cookieName, 'test');
    assert.equal(pause?.warmPool, 3);
    assert.equal(pause?.sessionExpiryMs, 2 * 3_600_000);
    assert.equal(pause?.namespace, 'default');
    assert.equal(pause?.revision, 'ai-agent-pause-00001');
    assert.deepEqual(pause?.container.argv, ['node', '../session-app/server.mjs']);
    assert.equal(pause?.container.workingDir, EXAMPLES);
    assert.equal(pause?.container.containerPort, 8080);
    assert.match(pause?.container.image ?? '', /helloworld-go-session/);
  });

  it('reads several documents per file and a folder, and refuses a duplicate service', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tether-svc-'));
    try {
      await writeFile(join(dir, 'a.yaml'), `${serviceYaml('one', {})}---\n${serviceYaml('two', {})}`);
      await writeFile(join(dir, 'notes.txt'), 'not yaml');
      assert.deepEqual(
        (await loadServices(dir)).map((s) => [s.name, s.source.document]),
        [
          ['one', 1],
          ['two', 2],
        ],
      );
      await writeFile(join(dir, 'b.yml'), serviceYaml('one', {}));
      await assert.rejects(loadServices(dir), (err: unknown) => {
        assert.ok(err instanceof ManifestError);
        assert.match(
          err.message,
          /b\.yml: document 1: metadata\.name: service one\.default is already defined in .*a\.yaml/,
        );
        return true;
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses one service name in two namespaces, naming both services and files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tether-svc-'));
    try {
      const inNamespace = (ns: string) =>
        serviceYaml('agent', {}).replace('  name: agent\n', `  name: agent\n  namespace: ${ns}\n`);
      await writeFile(join(dir, 'a.yaml'), inNamespace('team-a'));
      await writeFile(join(dir, 'b.yaml'), inNamespace('team-b'));
      await assert.rejects(loadServices(dir), (err: unknown) => {
        assert.ok(err instanceof DuplicateServiceError);
        assert.match(
          err.message,
          /b\.yaml: document 1: metadata\.name: service agent\.team-b has the name of service agent\.team-a \(.*a\.yaml document 1\): service names must be unique across namespaces/,
        );
        return true;
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a path that does not exist', async () => {
    await assert.rejects(loadServices('/nonexistent/tether'), /path: cannot be read/);
  });
});

describe('parseManifestText()', () => {
  it('parses Knative durations like 1h30m and 90s, and the scale annotations', () => {
    const [s] = parseManifestText(
      serviceYaml('svc', {
        'serving.knative.dev/session-timeout': '1h30m',
        'serving.knative.dev/session-expiry': '90s',
        'autoscaling.knative.dev/target': '4',
        'autoscaling.knative.dev/min-scale': '1',
        'autoscaling.knative.dev/max-scale': '3',
      }),
      '/m/ok.yaml',
    );
    assert.equal(s?.sessionTimeoutMs, 5_400_000);
    assert.equal(s?.sessionExpiryMs, 90_000);
    assert.deepEqual([s?.target, s?.minScale, s?.maxScale], [4, 1, 3]);
    assert.equal(s?.cookieName, 'tether-session');
  });

  it('reads env, workingDir, args and the readiness path of containers[0]', () => {
    const [s] = parseManifestText(
      serviceYaml(
        'svc',
        {},
        `          args: ["--flag"]
          workingDir: sub
          env:
            - name: GREETING
              value: hi
          readinessProbe:
            httpGet:
              path: /ready
`,
      ),
      '/m/ok.yaml',
    );
    assert.deepEqual(s?.container.argv.slice(-1), ['--flag']);
    assert.equal(s?.container.workingDir, '/m/sub');
    assert.deepEqual(s?.container.env, { GREETING: 'hi' });
    assert.equal(s?.container.readinessPath, '/ready');
  });

  const ann = (k: string, v: string) => serviceYaml('svc', { [k]: v });
  const cases: Array<[string, string, RegExp]> = [
    ['a bad duration', ann('serving.knative.dev/session-timeout', 'soon'), /session-timeout/],
    ['a bad idle policy', ann('serving.knative.dev/sandbox-idle-policy', 'sleep'), /sandbox-idle-policy/],
    ['a negative warm pool', ann('serving.knative.dev/warm-pool', '-1'), /warm-pool/],
    ['a zero target', ann('autoscaling.knative.dev/target', '0'), /autoscaling\.knative\.dev\/target/],
    ['another metric', ann('autoscaling.knative.dev/metric', 'rps'), /autoscaling\.knative\.dev\/metric/],
    ['another workload type', ann('serving.knative.dev/workload-type', 'pod'), /workload-type/],
    [
      'min above max',
      serviceYaml('svc', { 'autoscaling.knative.dev/min-scale': '3', 'autoscaling.knative.dev/max-scale': '1' }),
      /min-scale/,
    ],
    ['a wrong kind', serviceYaml('svc', {}).replace('kind: Service', 'kind: Deployment'), /^kind$/],
    ['a wrong apiVersion', serviceYaml('svc', {}).replace('serving.knative.dev/v1', 'apps/v1'), /^apiVersion$/],
    ['a bad name', serviceYaml('Bad_Name', {}), /^metadata\.name$/],
    [
      'no command',
      serviceYaml('svc', {}).replace(/- command: .*\n/, '- image: example/app\n'),
      /containers\[0\]\.command/,
    ],
    [
      'an unquoted number annotation',
      serviceYaml('svc', {}).replace('annotations:\n', 'annotations:\n        autoscaling.knative.dev/target: 1\n'),
      /target/,
    ],
  ];
  for (const [what, yaml, field] of cases) {
    it(`refuses ${what}, naming the field`, () => refused(yaml, field));
  }

  it('names the document of a bad service in a multi-document file', () => {
    refused(
      `${serviceYaml('ok', {})}---\n${ann('serving.knative.dev/session-expiry', '2 hours')}`,
      /session-expiry/,
      2,
    );
  });
});

/**
 * The Helm chart in deploy/helm/tether, rendered by our Go-template renderer (helm is not on these machines)
 * with its default values and with every option on: every object parses and has its required fields, RBAC is
 * exactly the seed's (ClusterRole create tokenreviews; per sandbox namespace a Role with get, plus list and
 * watch on claims; the gateway's Role is the one the API double enforces), probes, Secrets, NetworkPolicies
 * and the ServiceMonitor appear as configured. By default memory is kept: SQLite on a PersistentVolumeClaim,
 * the admin key in a Secret made once and found again on upgrade, no gateway (it needs services).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { parseKey } from '../../src/auth/keys.ts';
import { MIN_SECRET_LENGTH } from '../../src/common/secret-file.ts';
import { GATEWAY_RULES, MEMORY_SERVER_RULES } from '../kube/rbac.ts';
import { type ClusterObject, TemplateSet } from './go-template.ts';

type Doc = any;
const CHART = join(import.meta.dirname, '../../deploy/helm/tether');
const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8'));
const defaults = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8'));

function merge(a: Doc, b: Doc): Doc {
  if (!b || typeof b !== 'object' || Array.isArray(b)) return b;
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = merge(a?.[k], v);
  return out;
}

function templates(cluster: ClusterObject[]): { set: TemplateSet; files: string[] } {
  const set = new TemplateSet(cluster);
  const files = readdirSync(join(CHART, 'templates')).sort();
  for (const f of files) set.add(f, readFileSync(join(CHART, 'templates', f), 'utf8'));
  return { set, files };
}

const rootOf = (values: Doc) => ({
  Values: merge(defaults, values),
  Release: { Name: 'tether', Namespace: 'tether', Service: 'Helm' },
  Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion },
});

/** NOTES.txt as helm prints it after an install with `values`. */
function notes(values: Doc = {}): string {
  return templates([]).set.render('NOTES.txt', rootOf(values));
}

/**
 * Renders every template with `values` over the defaults, as `helm template tether --namespace tether` would
 * (or, given `cluster`, as `helm upgrade` would over a cluster holding those objects).
 */
function render(values: Doc = {}, cluster: ClusterObject[] = []): Doc[] {
  const { set, files } = templates(cluster);
  const root = rootOf(values);
  return files
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) =>
      parseAllDocuments(set.render(f, root)).map((d) => {
        assert.equal(d.errors.length, 0, `${f}: ${d.errors.join('; ')}`);
        return d.toJS();
      }),
    )
    .filter((d) => d !== null && d !== undefined);
}

const of = (docs: Doc[], kind: string) => docs.filter((d) => d.kind === kind);
const named = (docs: Doc[], kind: string, name: string, ns?: string) =>
  docs.find((d) => d.kind === kind && d.metadata.name === name && (ns === undefined || d.metadata.namespace === ns));
const CLUSTER_SCOPED = ['ClusterRole', 'ClusterRoleBinding'];

const AGENT = 'apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata:\n  name: a\n';
const withGateway = { gateway: { enabled: true, services: { 'agent.yaml': AGENT } } };

const everything = {
  sandboxNamespaces: ['agents', 'agents-b'],
  memory: { replicas: 3, postgres: { enabled: true } },
  gateway: { enabled: true, replicas: 2, redis: { enabled: true }, services: { 'agent.yaml': AGENT } },
  metrics: { serviceMonitor: { enabled: true } },
};

describe('deploy/helm/tether', () => {
  for (const [label, values] of [
    ['default values', {}],
    ['the gateway on', withGateway],
    ['every option on', everything],
  ] as const) {
    it(`renders objects that parse, with apiVersion, kind, name, labels and a namespace (${label})`, () => {
      const docs = render(values);
      assert.ok(docs.length >= 11, `${docs.length} objects`);
      for (const d of docs) {
        assert.ok(d.apiVersion && d.kind && d.metadata?.name, JSON.stringify(d).slice(0, 100));
        assert.equal(d.metadata.labels?.['app.kubernetes.io/part-of'], 'tether', `${d.kind}/${d.metadata.name} labels`);
        if (!CLUSTER_SCOPED.includes(d.kind)) assert.ok(d.metadata.namespace, `${d.kind}/${d.metadata.name} namespace`);
        assert.ok(!JSON.stringify(d).includes('<no value>'), `${d.kind}/${d.metadata.name} has a missing value`);
      }
      for (const dep of of(docs, 'Deployment')) {
        const pod = dep.spec.template.spec;
        assert.deepEqual(dep.spec.selector.matchLabels, { 'app.kubernetes.io/name': dep.metadata.name });
        assert.equal(dep.spec.template.metadata.labels['app.kubernetes.io/name'], dep.metadata.name);
        assert.equal(pod.securityContext.runAsNonRoot, true);
        assert.equal(pod.containers[0].image, `tether:${chart.appVersion}`);
        assert.equal(pod.containers[0].securityContext.readOnlyRootFilesystem, true);
        assert.ok(pod.containers[0].readinessProbe && pod.containers[0].livenessProbe, `${dep.metadata.name} probes`);
        assert.ok(named(docs, 'ServiceAccount', pod.serviceAccountName, dep.metadata.namespace), 'its ServiceAccount');
      }
    });
  }

  it('grants the memory server create tokenreviews (cluster) and, per sandbox namespace, get + list/watch claims only', () => {
    const docs = render(everything);
    const clusterRoles = of(docs, 'ClusterRole');
    assert.equal(clusterRoles.length, 1);
    assert.deepEqual(clusterRoles[0].rules, [
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    ]);
    const crb = of(docs, 'ClusterRoleBinding')[0];
    assert.deepEqual(crb.subjects, [{ kind: 'ServiceAccount', name: 'tether-memory', namespace: 'tether' }]);
    for (const ns of everything.sandboxNamespaces) {
      const role = named(docs, 'Role', 'tether-memory-owner-lookup', ns);
      assert.ok(role, `memory Role in ${ns}`);
      assert.deepEqual(role.rules, MEMORY_SERVER_RULES);
      const binding = named(docs, 'RoleBinding', 'tether-memory-owner-lookup', ns);
      assert.deepEqual(binding.roleRef, {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: role.metadata.name,
      });
      assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'tether-memory', namespace: 'tether' }]);
      const sa = named(docs, 'ServiceAccount', 'tether-sandbox', ns);
      assert.equal(sa.automountServiceAccountToken, false);
    }
    for (const r of [...of(docs, 'Role'), ...clusterRoles]) {
      for (const rule of r.rules) {
        assert.ok(![...rule.verbs, ...rule.resources, ...rule.apiGroups].includes('*'), `${r.metadata.name}: wildcard`);
      }
    }
  });

  it("grants the gateway exactly the API double's gateway Role, in its sandbox namespace", () => {
    const docs = render(withGateway);
    const role = named(docs, 'Role', 'tether-gateway-sandboxes', 'agents');
    assert.deepEqual(role.rules, GATEWAY_RULES);
    const binding = named(docs, 'RoleBinding', 'tether-gateway-sandboxes', 'agents');
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'tether-gateway', namespace: 'tether' }]);
    const args: string[] = named(docs, 'Deployment', 'tether-gateway').spec.template.spec.containers[0].args;
    const flag = (f: string) => args[args.indexOf(f) + 1];
    assert.equal(flag('--runtime'), 'kubernetes');
    assert.equal(flag('--namespace'), 'agents');
    assert.equal(flag('--memory-url'), 'http://tether-memory.tether.svc.cluster.local:8080');
    assert.equal(args.includes('--session-store'), false);
  });

  it('probes the memory server on /readyz and /healthz, one replica on SQLite', () => {
    const docs = render();
    const c = named(docs, 'Deployment', 'tether-memory').spec.template.spec.containers[0];
    assert.deepEqual(c.readinessProbe.httpGet, { path: '/readyz', port: 'http' });
    assert.deepEqual(c.livenessProbe.httpGet, { path: '/healthz', port: 'http' });
    assert.equal(named(docs, 'Deployment', 'tether-memory').spec.replicas, 1);
    assert.ok(!c.env.some((e: Doc) => e.name === 'TETHER_POSTGRES_URL'));
    assert.equal(of(docs, 'ServiceMonitor').length, 0);
    const svc = named(docs, 'Service', 'tether-memory');
    assert.deepEqual(svc.spec.selector, { 'app.kubernetes.io/name': 'tether-memory' });
  });

  it('takes the PostgreSQL and Redis URLs from Secrets, and lets only the memory server (gateway) reach its store', () => {
    const docs = render(everything);
    const memory = named(docs, 'Deployment', 'tether-memory');
    assert.equal(memory.spec.replicas, 3);
    const env = memory.spec.template.spec.containers[0].env;
    assert.deepEqual(env.find((e: Doc) => e.name === 'TETHER_POSTGRES_URL').valueFrom, {
      secretKeyRef: { name: 'tether-postgres', key: 'url' },
    });
    assert.equal(env.find((e: Doc) => e.name === 'TETHER_STORE').value, 'postgres');
    const gw = named(docs, 'Deployment', 'tether-gateway');
    assert.equal(gw.spec.replicas, 2);
    const gwc = gw.spec.template.spec.containers[0];
    assert.equal(gwc.args[gwc.args.indexOf('--session-store') + 1], 'redis');
    assert.deepEqual(gwc.env.find((e: Doc) => e.name === 'TETHER_REDIS_URL').valueFrom, {
      secretKeyRef: { name: 'tether-redis', key: 'url' },
    });
    const pg = named(docs, 'NetworkPolicy', 'tether-postgres', 'tether');
    assert.deepEqual(pg.spec.podSelector, { matchLabels: { 'app.kubernetes.io/name': 'postgresql' } });
    assert.deepEqual(pg.spec.ingress, [
      {
        from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'tether-memory' } } }],
        ports: [{ protocol: 'TCP', port: 5432 }],
      },
    ]);
    const redis = named(docs, 'NetworkPolicy', 'tether-redis', 'tether');
    assert.deepEqual(redis.spec.ingress[0].from, [
      { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'tether-gateway' } } },
    ]);
    const cm = named(docs, 'ConfigMap', 'tether-gateway-services');
    assert.match(cm.data['agent.yaml'], /kind: Service/);
    const sm = of(docs, 'ServiceMonitor');
    assert.equal(sm.length, 1);
    assert.deepEqual(sm[0].spec.endpoints, [{ port: 'http', path: '/metrics', interval: '30s' }]);
  });

  it('lets sandboxes reach DNS, the memory server on 8080 and the public internet only, and only the gateway reach them', () => {
    const docs = render(everything);
    for (const ns of everything.sandboxNamespaces) {
      const np = named(docs, 'NetworkPolicy', 'tether-sandbox', ns);
      assert.deepEqual(np.spec.policyTypes, ['Ingress', 'Egress']);
      const [dns, memory, internet] = np.spec.egress;
      assert.deepEqual(dns.ports, [
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ]);
      assert.deepEqual(memory.to[0].podSelector.matchLabels, { 'app.kubernetes.io/name': 'tether-memory' });
      assert.deepEqual(memory.ports, [{ protocol: 'TCP', port: 8080 }]);
      assert.equal(internet.to[0].ipBlock.cidr, '0.0.0.0/0');
      assert.ok(internet.to[0].ipBlock.except.includes('10.0.0.0/8'));
      assert.deepEqual(np.spec.ingress[0].from[0].podSelector.matchLabels, {
        'app.kubernetes.io/name': 'tether-gateway',
      });
    }
    assert.equal(render({ networkPolicy: { enabled: false } }).filter((d) => d.kind === 'NetworkPolicy').length, 0);
  });

  describe('memory kept by default', () => {
    const memoryPod = (docs: Doc[]) => named(docs, 'Deployment', 'tether-memory').spec.template.spec;
    const dataVolume = (docs: Doc[]) => {
      const pod = memoryPod(docs);
      const mount = pod.containers[0].volumeMounts.find((m: Doc) => m.mountPath === '/data');
      assert.ok(mount, 'a volume at /data');
      return pod.volumes.find((v: Doc) => v.name === mount.name);
    };
    const dataDir = (docs: Doc[]) =>
      memoryPod(docs).containers[0].env.find((e: Doc) => e.name === 'TETHER_DATA').value as string;

    it('puts the SQLite store on a PersistentVolumeClaim mounted at the data folder, replaced with Recreate', () => {
      const docs = render();
      assert.equal(dataDir(docs), '/data');
      const volume = dataVolume(docs);
      assert.equal(volume.emptyDir, undefined);
      assert.deepEqual(volume.persistentVolumeClaim, { claimName: 'tether-memory-data' });
      const pvc = named(docs, 'PersistentVolumeClaim', 'tether-memory-data', 'tether');
      assert.deepEqual(pvc.spec.accessModes, ['ReadWriteOnce']);
      assert.equal(pvc.spec.resources.requests.storage, '1Gi');
      assert.equal('storageClassName' in pvc.spec, false, 'the default StorageClass');
      assert.equal(pvc.metadata.annotations['helm.sh/resource-policy'], 'keep');
      assert.deepEqual(named(docs, 'Deployment', 'tether-memory').spec.strategy, { type: 'Recreate' });
      assert.doesNotMatch(notes(), /WARNING/);
    });

    it('takes the size and storage class from values, or mounts a claim of the user', () => {
      const sized = render({ memory: { persistence: { size: '20Gi', storageClass: 'fast' } } });
      const pvc = named(sized, 'PersistentVolumeClaim', 'tether-memory-data');
      assert.equal(pvc.spec.resources.requests.storage, '20Gi');
      assert.equal(pvc.spec.storageClassName, 'fast');
      const none = named(
        render({ memory: { persistence: { storageClass: '-' } } }),
        'PersistentVolumeClaim',
        'tether-memory-data',
      );
      assert.equal(none.spec.storageClassName, '');
      const theirs = render({ memory: { persistence: { existingClaim: 'my-claim' } } });
      assert.equal(of(theirs, 'PersistentVolumeClaim').length, 0);
      assert.deepEqual(dataVolume(theirs).persistentVolumeClaim, { claimName: 'my-claim' });
    });

    it('uses an emptyDir only when asked, and NOTES.txt then warns that a restart loses the memory', () => {
      const values = { memory: { persistence: { enabled: false } } };
      const docs = render(values);
      assert.equal(of(docs, 'PersistentVolumeClaim').length, 0);
      assert.deepEqual(dataVolume(docs).emptyDir, {});
      assert.match(notes(values), /WARNING: memory\.persistence\.enabled=false: the SQLite store lives on an emptyDir/);
      assert.match(notes(values), /loses every agent's memory/);
    });

    it('makes no claim with PostgreSQL (several replicas, the memory is in the database)', () => {
      const docs = render(everything);
      assert.equal(of(docs, 'PersistentVolumeClaim').length, 0);
      assert.deepEqual(dataVolume(docs).emptyDir, {});
      assert.equal(named(docs, 'Deployment', 'tether-memory').spec.strategy, undefined);
      assert.doesNotMatch(notes(everything), /WARNING/);
    });

    it('gives every replica the admin key from one Secret, made with a well-formed random key', () => {
      for (const values of [{}, everything]) {
        const docs = render(values);
        const env = memoryPod(docs).containers[0].env.find((e: Doc) => e.name === 'TETHER_ADMIN_KEY');
        assert.deepEqual(env.valueFrom, { secretKeyRef: { name: 'tether-admin-key', key: 'admin-key' } });
        const secret = named(docs, 'Secret', 'tether-admin-key', 'tether');
        assert.equal(secret.metadata.annotations['helm.sh/resource-policy'], 'keep');
        const key = Buffer.from(secret.data['admin-key'], 'base64').toString();
        assert.ok(parseKey(key), `${key.slice(0, 4)}… is not tth_<16 hex>_<64 hex>`);
      }
      const a = named(render(), 'Secret', 'tether-admin-key').data['admin-key'];
      const b = named(render(), 'Secret', 'tether-admin-key').data['admin-key'];
      assert.notEqual(a, b, 'a first install makes a new random key');
      assert.match(notes(), /get secret tether-admin-key -o jsonpath='\{\.data\.admin-key\}' \| base64 -d/);
    });

    it('keeps the key of the Secret already in the cluster on upgrade', () => {
      const kept = Buffer.from(`tth_${'a'.repeat(16)}_${'b'.repeat(64)}`).toString('base64');
      const cluster: ClusterObject[] = [
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'tether-admin-key', namespace: 'tether' },
          data: { 'admin-key': kept },
        },
      ];
      assert.equal(named(render({}, cluster), 'Secret', 'tether-admin-key').data['admin-key'], kept);
      const other = [{ ...cluster[0]!, metadata: { name: 'tether-admin-key', namespace: 'elsewhere' } }];
      assert.notEqual(named(render({}, other), 'Secret', 'tether-admin-key').data['admin-key'], kept);
      const broken = [{ ...cluster[0]!, data: {} }];
      assert.throws(() => render({}, broken), /tether-admin-key has no admin-key/);
    });

    it("reads a user's Secret instead of making one", () => {
      const docs = render({ memory: { adminKey: { existingSecret: 'mine', key: 'k' } } });
      assert.equal(named(docs, 'Secret', 'tether-admin-key'), undefined);
      const env = memoryPod(docs).containers[0].env.find((e: Doc) => e.name === 'TETHER_ADMIN_KEY');
      assert.deepEqual(env.valueFrom, { secretKeyRef: { name: 'mine', key: 'k' } });
    });
  });

  describe('the gateway', () => {
    it('is off by default (it needs services), and says so in NOTES.txt', () => {
      const docs = render();
      assert.equal(named(docs, 'Deployment', 'tether-gateway'), undefined);
      assert.equal(of(docs, 'ConfigMap').length, 0);
      assert.match(notes(), /Session gateway: off/);
    });

    it('refuses to render when enabled with no services', () => {
      assert.throws(() => render({ gateway: { enabled: true } }), /gateway\.enabled needs gateway\.services/);
    });

    it('serves the services it is given, with its secrets from the Secret that values.yaml describes', () => {
      const docs = render(withGateway);
      const cm = named(docs, 'ConfigMap', 'tether-gateway-services');
      assert.deepEqual(Object.keys(cm.data), ['agent.yaml']);
      const gw = named(docs, 'Deployment', 'tether-gateway').spec.template.spec;
      const c = gw.containers[0];
      assert.equal(
        c.args[c.args.indexOf('--services') + 1],
        c.volumeMounts.find((m: Doc) => m.name === 'services').mountPath,
      );
      assert.deepEqual(gw.volumes.find((v: Doc) => v.name === 'services').configMap, {
        name: 'tether-gateway-services',
      });
      for (const [name, key] of [
        ['TETHER_CLAIM_SECRET', 'claim-secret'],
        ['TETHER_SESSION_SECRET', 'session-secret'],
      ]) {
        const env = c.env.find((e: Doc) => e.name === name);
        assert.deepEqual(env.valueFrom, { secretKeyRef: { name: 'tether-gateway-secrets', key } });
      }
      assert.match(notes(withGateway), /Session gateway: http:\/\/tether-gateway\.tether\.svc\.cluster\.local:8081/);
    });

    it(`asks for secrets of at least MIN_SECRET_LENGTH (${MIN_SECRET_LENGTH}) characters, as the gateway checks`, () => {
      const text = readFileSync(join(CHART, 'values.yaml'), 'utf8');
      assert.match(text, new RegExp(`at least ${MIN_SECRET_LENGTH} characters each`));
      assert.doesNotMatch(text, /16 bytes/);
      // openssl rand -hex 32 makes 64 characters: enough.
      assert.match(text, /openssl rand -hex 32/);
    });
  });
});

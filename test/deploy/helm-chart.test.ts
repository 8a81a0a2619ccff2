/**
 * The Helm chart in deploy/helm/tether, rendered by our Go-template renderer (helm is not on these machines)
 * with its default values and with every option on: every object parses and has its required fields, RBAC is
 * exactly the seed's (ClusterRole create tokenreviews; per sandbox namespace a Role with get, plus list and
 * watch on claims; the gateway's Role is the one the API double enforces), probes, Secrets, NetworkPolicies
 * and the ServiceMonitor appear as configured.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { GATEWAY_RULES, MEMORY_SERVER_RULES } from '../kube/rbac.ts';
import { TemplateSet } from './go-template.ts';

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

/** Renders every template with `values` over the defaults, as `helm template tether --namespace tether` would. */
function render(values: Doc = {}): Doc[] {
  const set = new TemplateSet();
  const files = readdirSync(join(CHART, 'templates')).sort();
  for (const f of files) set.add(f, readFileSync(join(CHART, 'templates', f), 'utf8'));
  const root = {
    Values: merge(defaults, values),
    Release: { Name: 'tether', Namespace: 'tether', Service: 'Helm' },
    Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion },
  };
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

const everything = {
  sandboxNamespaces: ['agents', 'agents-b'],
  memory: { replicas: 3, postgres: { enabled: true } },
  gateway: {
    replicas: 2,
    redis: { enabled: true },
    services: { 'agent.yaml': 'apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata:\n  name: a\n' },
  },
  metrics: { serviceMonitor: { enabled: true } },
};

describe('deploy/helm/tether', () => {
  for (const [label, values] of [
    ['default values', {}],
    ['every option on', everything],
  ] as const) {
    it(`renders objects that parse, with apiVersion, kind, name, labels and a namespace (${label})`, () => {
      const docs = render(values);
      assert.ok(docs.length >= 15, `${docs.length} objects`);
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
    const docs = render();
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
});

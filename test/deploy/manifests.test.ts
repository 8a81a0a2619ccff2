/**
 * The Kubernetes manifests in deploy/kubernetes agree with each other and with the exchanger:
 * names, audience, ports, selectors, least RBAC (create tokenreviews; get in the sandbox namespace only,
 * list + watch of sandboxclaims there; the double's Role is the same),
 * agent-sandbox v1beta1 wiring and the sandbox network policy.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { apiVersionOf, SANDBOX_CLAIM, SANDBOX_TEMPLATE, SANDBOX_WARM_POOL } from '../../src/kube/agent-sandbox.ts';
import { MEMORY_SERVER_RULES } from '../kube/rbac.ts';

type Doc = any;

const DIR = join(import.meta.dirname, '../../deploy/kubernetes');
const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
const docs: Doc[] = files.flatMap((f) =>
  parseAllDocuments(readFileSync(join(DIR, f), 'utf8')).map((d) => {
    assert.equal(d.errors.length, 0, `${f}: ${d.errors.join('; ')}`);
    return d.toJS();
  }),
);
const all = (kind: string): Doc[] => docs.filter((d) => d.kind === kind);
function one(kind: string): Doc {
  const found = all(kind);
  assert.equal(found.length, 1, `expected one ${kind}, found ${found.length}`);
  return found[0];
}
const byName = (kind: string, name: string, ns?: string): Doc =>
  docs.find((d) => d.kind === kind && d.metadata.name === name && (ns === undefined || d.metadata.namespace === ns));
const arg = (args: string[], flag: string): string | undefined => args[args.indexOf(flag) + 1];

const deployment = one('Deployment');
const server = deployment.spec.template.spec;
const container = server.containers[0];
const service = one('Service');
const template = one('SandboxTemplate');
const sandboxNs: string = template.metadata.namespace;
const sandboxPod = template.spec.podTemplate.spec;
const memoryNs: string = deployment.metadata.namespace;

describe('deploy/kubernetes', () => {
  it('lists every manifest in kustomization.yaml, and each object is named and in a declared namespace', () => {
    const kustomization = parseAllDocuments(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8'))[0]!.toJS();
    assert.deepEqual([...kustomization.resources].sort(), [...files].sort());
    const namespaces = all('Namespace').map((n) => n.metadata.name);
    assert.deepEqual(namespaces.sort(), [memoryNs, sandboxNs].sort());
    for (const d of docs) {
      assert.ok(d.apiVersion && d.kind && d.metadata?.name, JSON.stringify(d).slice(0, 80));
      const clusterScoped = ['Namespace', 'ClusterRole', 'ClusterRoleBinding'].includes(d.kind);
      if (!clusterScoped) assert.ok(namespaces.includes(d.metadata.namespace), `${d.kind}/${d.metadata.name}`);
    }
  });

  it('runs `tether memory` on 0.0.0.0:8080 for audience tether behind a Service on 8080', () => {
    assert.deepEqual(container.args, ['memory', '--host', '0.0.0.0', '--port', '8080', '--audience', 'tether']);
    const port = container.ports.find((p: Doc) => p.containerPort === 8080);
    assert.ok(port, 'containerPort 8080');
    assert.equal(service.metadata.namespace, memoryNs);
    assert.equal(service.spec.ports[0].port, 8080);
    assert.ok([port.name, 8080].includes(service.spec.ports[0].targetPort));
    for (const [k, v] of Object.entries(service.spec.selector))
      assert.equal(deployment.spec.template.metadata.labels[k], v);
    for (const [k, v] of Object.entries(deployment.spec.selector.matchLabels)) {
      assert.equal(deployment.spec.template.metadata.labels[k], v);
    }
  });

  it('gives the memory server a service account bound to exactly create tokenreviews, cluster-wide', () => {
    const sa = byName('ServiceAccount', server.serviceAccountName, memoryNs);
    assert.ok(sa, 'the Deployment service account exists');
    assert.notEqual(server.automountServiceAccountToken, false, 'the server needs its in-cluster token');
    const binding = one('ClusterRoleBinding');
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: sa.metadata.name, namespace: memoryNs }]);
    assert.equal(binding.roleRef.kind, 'ClusterRole');
    const role = byName('ClusterRole', binding.roleRef.name);
    assert.deepEqual(role.rules, [
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    ]);
  });

  it('grants get on pods, sandboxes, sandboxclaims (and list, watch on claims) in the sandbox namespace only', () => {
    const binding = one('RoleBinding');
    assert.equal(binding.metadata.namespace, sandboxNs);
    assert.deepEqual(binding.subjects, [
      { kind: 'ServiceAccount', name: server.serviceAccountName, namespace: memoryNs },
    ]);
    assert.equal(binding.roleRef.kind, 'Role');
    const role = byName('Role', binding.roleRef.name, sandboxNs);
    assert.ok(role, 'the bound Role is in the sandbox namespace');
    assert.deepEqual(role.rules, MEMORY_SERVER_RULES);
  });

  it('uses no verb but create, get and (claims only) list/watch, no wildcard, and no ClusterRole that reads pods', () => {
    for (const r of [...all('ClusterRole'), ...all('Role')]) {
      for (const rule of r.rules) {
        const verbs = rule.resources.includes('sandboxclaims') ? ['get', 'list', 'watch'] : ['create', 'get'];
        for (const v of rule.verbs) assert.ok(verbs.includes(v), `${r.metadata.name}: verb ${v}`);
        assert.ok(![...rule.verbs, ...rule.resources, ...rule.apiGroups].includes('*'), `${r.metadata.name}: wildcard`);
      }
    }
    for (const r of all('ClusterRole')) {
      assert.ok(!r.rules.some((rule: Doc) => rule.verbs.includes('get')), `${r.metadata.name} grants get cluster-wide`);
    }
  });

  it('gives sandboxes a service account without a default token and one projected token for audience tether', () => {
    const sa = byName('ServiceAccount', sandboxPod.serviceAccountName, sandboxNs);
    assert.equal(sa?.automountServiceAccountToken, false);
    assert.equal(sandboxPod.automountServiceAccountToken, false);
    const volume = sandboxPod.volumes.find((v: Doc) => v.projected);
    const source = volume.projected.sources[0].serviceAccountToken;
    assert.equal(source.audience, arg(container.args, '--audience'));
    assert.equal(source.expirationSeconds, 3600);
    const agent = sandboxPod.containers[0];
    const mount = agent.volumeMounts.find((m: Doc) => m.name === volume.name);
    assert.equal(mount.readOnly, true);
    const env = Object.fromEntries(agent.env.map((e: Doc) => [e.name, e.value]));
    assert.equal(env.TETHER_TOKEN_FILE, `${mount.mountPath}/${source.path}`);
    const servicePort = service.spec.ports[0].port;
    assert.equal(env.TETHER_URL, `http://${service.metadata.name}.${memoryNs}.svc.cluster.local:${servicePort}`);
  });

  it('lets sandboxes reach cluster DNS, the memory server pods on 8080 and the public internet only', () => {
    const egress: Doc[] = template.spec.networkPolicy.egress;
    assert.equal(egress.length, 3);
    const [dns, memory, internet] = egress;
    assert.deepEqual(dns.to, [
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
        podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
      },
    ]);
    assert.deepEqual(dns.ports, [
      { protocol: 'UDP', port: 53 },
      { protocol: 'TCP', port: 53 },
    ]);
    assert.deepEqual(memory.to[0].namespaceSelector.matchLabels, { 'kubernetes.io/metadata.name': memoryNs });
    for (const [k, v] of Object.entries(memory.to[0].podSelector.matchLabels)) {
      assert.equal(deployment.spec.template.metadata.labels[k], v, 'selects the memory server pods');
    }
    assert.deepEqual(memory.ports, [{ protocol: 'TCP', port: 8080 }]);
    assert.equal(internet.to[0].ipBlock.cidr, '0.0.0.0/0');
    for (const cidr of ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16']) {
      assert.ok(internet.to[0].ipBlock.except.includes(cidr), `except ${cidr}`);
    }
    assert.equal(internet.ports, undefined);
    assert.equal(template.spec.networkPolicy.ingress, undefined, 'no ingress into sandboxes');
  });

  it('wires template -> warm pool -> claim run-1 with the agent-sandbox v1beta1 field names', () => {
    const pool = one('SandboxWarmPool');
    const claim = one('SandboxClaim');
    assert.equal(template.apiVersion, apiVersionOf(SANDBOX_TEMPLATE));
    assert.equal(pool.apiVersion, apiVersionOf(SANDBOX_WARM_POOL));
    assert.equal(claim.apiVersion, apiVersionOf(SANDBOX_CLAIM));
    assert.equal(pool.metadata.namespace, sandboxNs);
    assert.equal(claim.metadata.namespace, sandboxNs);
    assert.equal(pool.spec.sandboxTemplateRef.name, template.metadata.name);
    assert.ok(pool.spec.replicas >= 1);
    assert.equal(claim.metadata.name, 'run-1');
    assert.deepEqual(claim.spec, { warmPoolRef: { name: pool.metadata.name } });
  });
});

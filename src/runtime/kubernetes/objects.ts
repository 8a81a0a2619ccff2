/**
 * @module
 * The agent-sandbox objects the Kubernetes runtime writes, as pure functions of a `ServiceSpec`: one
 * SandboxTemplate (the Knative container with `PORT`/`K_*` as Knative sets them, the projected token for
 * audience `tether`, the sandbox NetworkPolicy) and one SandboxWarmPool per service, one SandboxClaim per
 * session (never with `env`, which would skip the warm pool). Labels say who manages them. No I/O.
 */

import { apiVersionOf, SANDBOX_CLAIM, SANDBOX_TEMPLATE, SANDBOX_WARM_POOL } from '../../kube/agent-sandbox.ts';
import type { KubeResource } from '../../kube/types.ts';
import type { ServiceSpec } from '../service-spec.ts';

/** Labels on every object the gateway writes. */
export const LABELS = Object.freeze({
  managedBy: 'app.kubernetes.io/managed-by',
  service: 'tether.dev/service',
  /** sha256 of the session key, 32 hex: finds a session's claim without the raw key. */
  sessionHash: 'tether.dev/session-key-hash',
  /** The gateway's instance name of a claim (the claim name itself for `target: 1`). */
  instance: 'tether.dev/instance',
});
/** The `managed-by` value. */
export const MANAGER = 'tether-gateway';
/** Selector of every object the gateway manages. */
export const MANAGED_SELECTOR = `${LABELS.managedBy}=${MANAGER}`;
/** Where the projected workload token is mounted in the sandbox. */
export const TOKEN_DIR = '/var/run/secrets/tether';
/** The container port when the manifest names none (Knative's default). */
export const DEFAULT_PORT = 8080;

/** What the objects need beyond the service spec. */
export interface SandboxObjectOptions {
  /** The sandbox namespace. */
  namespace: string;
  /** `TETHER_URL` given to sandboxes, e.g. `http://tether-memory.tether.svc.cluster.local:8080`. */
  memoryUrl?: string;
  /** Token audience. @default 'tether' */
  audience?: string;
  /** Service account of sandbox pods. @default 'tether-sandbox' */
  serviceAccount?: string;
  /** Namespace of the memory server (NetworkPolicy egress). @default 'tether' */
  memoryNamespace?: string;
}

/** The container port of a service. */
export function containerPort(cfg: ServiceSpec): number {
  return cfg.container.port ?? DEFAULT_PORT;
}

function labels(cfg: ServiceSpec): Record<string, string> {
  return { [LABELS.managedBy]: MANAGER, [LABELS.service]: cfg.name };
}

/** The SandboxTemplate of a service (named like it). */
export function templateFor(cfg: ServiceSpec, o: SandboxObjectOptions): KubeResource {
  const c = cfg.container;
  const port = containerPort(cfg);
  const env: { name: string; value: string }[] = [];
  const set = (name: string, value: string) => {
    const at = env.findIndex((e) => e.name === name);
    if (at >= 0) env.splice(at, 1);
    env.push({ name, value });
  };
  for (const [name, value] of Object.entries(c.env)) set(name, value);
  // What Knative gives every container, and where the agent finds the memory server and its token.
  set('PORT', String(port));
  set('K_SERVICE', cfg.name);
  set('K_CONFIGURATION', cfg.configuration);
  set('K_REVISION', cfg.revision);
  if (o.memoryUrl) set('TETHER_URL', o.memoryUrl);
  set('TETHER_TOKEN_FILE', `${TOKEN_DIR}/token`);
  set('TETHER_AUDIENCE', o.audience ?? 'tether');
  const container: Record<string, unknown> = {
    name: c.name || 'app',
    ...(c.image ? { image: c.image } : {}),
    ...(c.command ? { command: c.command } : {}),
    ...(c.args ? { args: c.args } : {}),
    ...(c.workingDir !== undefined ? { workingDir: c.workingDir } : {}),
    env,
    ports: [{ containerPort: port, protocol: 'TCP' }],
    ...(c.resources ? { resources: c.resources } : {}),
    ...(c.readinessProbe ? { readinessProbe: c.readinessProbe } : {}),
    volumeMounts: [{ name: 'tether-token', mountPath: TOKEN_DIR, readOnly: true }],
  };
  return {
    apiVersion: apiVersionOf(SANDBOX_TEMPLATE),
    kind: SANDBOX_TEMPLATE.kind,
    metadata: { name: cfg.name, namespace: o.namespace, uid: '', labels: labels(cfg) },
    spec: {
      podTemplate: {
        metadata: { labels: { 'app.kubernetes.io/name': cfg.name, [LABELS.service]: cfg.name } },
        spec: {
          serviceAccountName: o.serviceAccount ?? 'tether-sandbox',
          automountServiceAccountToken: false,
          containers: [container],
          volumes: [
            {
              name: 'tether-token',
              projected: {
                sources: [
                  { serviceAccountToken: { path: 'token', audience: o.audience ?? 'tether', expirationSeconds: 3600 } },
                ],
              },
            },
          ],
        },
      },
      networkPolicy: sandboxNetworkPolicy(o.memoryNamespace ?? 'tether'),
    },
  };
}

/** Egress to cluster DNS, the memory server on 8080 and the public internet; no ingress rule but the gateway's. */
function sandboxNetworkPolicy(memoryNamespace: string): Record<string, unknown> {
  const ns = (name: string) => ({ matchLabels: { 'kubernetes.io/metadata.name': name } });
  return {
    ingress: [
      {
        from: [
          {
            namespaceSelector: ns(memoryNamespace),
            podSelector: { matchLabels: { 'app.kubernetes.io/name': 'tether-gateway' } },
          },
        ],
      },
    ],
    egress: [
      {
        to: [{ namespaceSelector: ns('kube-system'), podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
        ports: [
          { protocol: 'UDP', port: 53 },
          { protocol: 'TCP', port: 53 },
        ],
      },
      {
        to: [
          {
            namespaceSelector: ns(memoryNamespace),
            podSelector: { matchLabels: { 'app.kubernetes.io/name': 'tether-memory' } },
          },
        ],
        ports: [{ protocol: 'TCP', port: 8080 }],
      },
      {
        to: [
          {
            ipBlock: {
              cidr: '0.0.0.0/0',
              except: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10'],
            },
          },
        ],
      },
    ],
  };
}

/** The SandboxWarmPool of a service: `replicas` = its `warm-pool` annotation (0 when absent). */
export function warmPoolFor(cfg: ServiceSpec, o: SandboxObjectOptions): KubeResource {
  return {
    apiVersion: apiVersionOf(SANDBOX_WARM_POOL),
    kind: SANDBOX_WARM_POOL.kind,
    metadata: { name: cfg.name, namespace: o.namespace, uid: '', labels: labels(cfg) },
    spec: { replicas: cfg.warmPool, sandboxTemplateRef: { name: cfg.name } },
  };
}

/** What identifies the claim of one instance. */
export interface ClaimIdentity {
  /** The claim name: the session's claim name for `target: 1`, else the instance name. */
  name: string;
  /** The gateway's instance name. */
  instance: string;
  /** `sessionKeyHash` of the session key, for `target: 1`. */
  sessionHash?: string;
  /** Absolute end (epoch ms): `spec.lifecycle.shutdownTime`, so the cluster ends it even without us. */
  shutdownAt?: number;
}

/** The SandboxClaim of one instance, from the service's warm pool. */
export function claimFor(cfg: ServiceSpec, id: ClaimIdentity, o: SandboxObjectOptions): KubeResource {
  return {
    apiVersion: apiVersionOf(SANDBOX_CLAIM),
    kind: SANDBOX_CLAIM.kind,
    metadata: {
      name: id.name,
      namespace: o.namespace,
      uid: '',
      labels: {
        ...labels(cfg),
        [LABELS.instance]: id.instance,
        ...(id.sessionHash ? { [LABELS.sessionHash]: id.sessionHash } : {}),
      },
    },
    spec: {
      warmPoolRef: { name: cfg.name },
      ...(id.shutdownAt
        ? {
            lifecycle: {
              shutdownTime: new Date(id.shutdownAt).toISOString().replace(/\.\d{3}Z$/, 'Z'),
              shutdownPolicy: 'Delete',
            },
          }
        : {}),
    },
  };
}

/**
 * @module
 * The structural schemas of agent-sandbox's four CRDs (v1beta1) as the double applies them: the fields of
 * each kind's spec and status with their types, enums and defaults as upstream's CRDs declare them
 * (`k8s/crds/*.yaml`, the defaults listed in DESIGN.md), written out here as our own reduced schema. Embedded
 * core types (the PodSpec, PVC templates, network policy peers, env) keep unknown fields, except the defaults
 * controller-gen puts in them that matter here (a container port's `protocol: TCP`, a gRPC probe's
 * `service: ""`). Used by `object-store.ts` (prune + default on every write) and `rest.ts` (validation).
 */
import {
  type ResourceType,
  SANDBOX,
  SANDBOX_CLAIM,
  SANDBOX_TEMPLATE,
  SANDBOX_WARM_POOL,
} from '../../src/kube/agent-sandbox.ts';
import type { WireObject } from './objects.ts';
import { pruneAndDefault, type StructuralSchema, validate } from './structural-schema.ts';

const str: StructuralSchema = { type: 'string' };
const int: StructuralSchema = { type: 'integer' };
const bool: StructuralSchema = { type: 'boolean' };
const strings: StructuralSchema = { type: 'array', items: str };
const stringMap: StructuralSchema = { type: 'object', additionalProperties: str };
/** An embedded core type whose inner fields the double does not list. */
const opaque: StructuralSchema = { type: 'object', preserveUnknown: true };
const opaqueList: StructuralSchema = { type: 'array', items: opaque };
const nameRef: StructuralSchema = { type: 'object', properties: { name: str } };
const objectMeta: StructuralSchema = { type: 'object', properties: { labels: stringMap, annotations: stringMap } };

const containerPort: StructuralSchema = {
  type: 'object',
  properties: { containerPort: int, hostIP: str, hostPort: int, name: str, protocol: { ...str, default: 'TCP' } },
};
const probe: StructuralSchema = {
  type: 'object',
  preserveUnknown: true,
  properties: { grpc: { type: 'object', properties: { port: int, service: { ...str, default: '' } } } },
};
const container: StructuralSchema = {
  type: 'object',
  preserveUnknown: true,
  properties: {
    ports: { type: 'array', items: containerPort },
    readinessProbe: probe,
    livenessProbe: probe,
    startupProbe: probe,
  },
};
const podSpec: StructuralSchema = {
  type: 'object',
  preserveUnknown: true,
  properties: {
    containers: { type: 'array', items: container },
    initContainers: { type: 'array', items: container },
  },
};
const podTemplate: StructuralSchema = { type: 'object', properties: { metadata: objectMeta, spec: podSpec } };

const conditions: StructuralSchema = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      type: str,
      status: { ...str, enum: ['True', 'False', 'Unknown'] },
      reason: str,
      message: str,
      observedGeneration: int,
      lastTransitionTime: str,
    },
  },
};

/** Sandbox (agents.x-k8s.io/v1beta1). */
const sandbox: StructuralSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        podTemplate,
        volumeClaimTemplates: opaqueList,
        service: bool,
        shutdownTime: str,
        shutdownPolicy: { ...str, enum: ['Delete', 'Retain'], default: 'Retain' },
        operatingMode: { ...str, enum: ['Running', 'Suspended'], default: 'Running' },
      },
    },
    status: {
      type: 'object',
      properties: {
        conditions,
        podIPs: strings,
        serviceFQDN: str,
        service: str,
        selector: str,
        nodeName: str,
        replicas: int,
      },
    },
  },
};

/** SandboxClaim (extensions.agents.x-k8s.io/v1beta1). */
const claim: StructuralSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        warmPoolRef: nameRef,
        lifecycle: {
          type: 'object',
          properties: {
            shutdownTime: str,
            ttlSecondsAfterFinished: int,
            shutdownPolicy: { ...str, enum: ['Delete', 'DeleteForeground', 'Retain'], default: 'Retain' },
          },
        },
        additionalPodMetadata: objectMeta,
        env: opaqueList,
        volumeClaimTemplates: opaqueList,
      },
    },
    status: {
      type: 'object',
      properties: { conditions, sandbox: { type: 'object', properties: { name: str, podIPs: strings } } },
    },
  },
};

/** SandboxTemplate (extensions.agents.x-k8s.io/v1beta1). */
const template: StructuralSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        podTemplate,
        volumeClaimTemplates: opaqueList,
        service: bool,
        networkPolicy: { type: 'object', properties: { ingress: opaqueList, egress: opaqueList } },
        networkPolicyManagement: { ...str, enum: ['Managed', 'Unmanaged'], default: 'Managed' },
        envVarsInjectionPolicy: { ...str, enum: ['Allowed', 'Overrides', 'Disallowed'], default: 'Disallowed' },
        volumeClaimTemplatesPolicy: { ...str, default: 'Disallowed' },
        generatedSecrets: opaqueList,
      },
    },
    status: opaque,
  },
};

/** SandboxWarmPool (extensions.agents.x-k8s.io/v1beta1). */
const warmPool: StructuralSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        replicas: { ...int, default: 1 },
        sandboxTemplateRef: nameRef,
        updateStrategy: {
          type: 'object',
          properties: { type: { ...str, enum: ['Recreate', 'OnReplenish'], default: 'OnReplenish' } },
        },
      },
    },
    status: {
      type: 'object',
      properties: { replicas: int, readyReplicas: int, availableReplicas: int, selector: str },
    },
  },
};

const key = (t: ResourceType) => `${t.plural}.${t.group}`;
const SCHEMAS = new Map<string, StructuralSchema>([
  [key(SANDBOX), sandbox],
  [key(SANDBOX_CLAIM), claim],
  [key(SANDBOX_TEMPLATE), template],
  [key(SANDBOX_WARM_POOL), warmPool],
]);

/** The schema of `spec` and `status` of a custom kind, or undefined for core kinds (their defaults are Go code). */
export function crdSchemaOf(type: ResourceType): StructuralSchema | undefined {
  return SCHEMAS.get(key(type));
}

/**
 * `obj` as the API server stores it: `spec` and `status` pruned and defaulted by the kind's schema, other
 * top-level fields but `apiVersion`, `kind` and `metadata` dropped. Core kinds come back unchanged.
 */
export function applyCrdSchema(type: ResourceType, obj: WireObject): WireObject {
  const schema = crdSchemaOf(type);
  if (!schema) return obj;
  const out: WireObject = { apiVersion: obj.apiVersion, kind: obj.kind, metadata: obj.metadata };
  for (const part of ['spec', 'status'] as const) {
    if (obj[part] === undefined || obj[part] === null) continue;
    out[part] = pruneAndDefault(obj[part], schema.properties![part]!) as Record<string, unknown>;
  }
  return out;
}

/** The first schema violation in `spec` of a custom object (the 422 message's field part), or null. */
export function crdViolation(type: ResourceType, obj: WireObject): string | null {
  const spec = crdSchemaOf(type)?.properties?.spec;
  return spec ? validate(obj.spec, spec, 'spec') : null;
}

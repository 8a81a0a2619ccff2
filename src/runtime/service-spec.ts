/**
 * @module
 * The runtime's own description of a service: the container to run (image, command, args, env, port,
 * resources, readiness probe, workingDir, each with its Kubernetes meaning) and what a runtime that keeps
 * per-service objects needs besides (names, warm pool, what happens to an instance nobody uses). Types
 * only. The gateway maps its Knative manifests into it; the Kubernetes runtime builds its SandboxTemplate,
 * SandboxWarmPool and SandboxClaims from it. Per-instance details (argv, resolved workingDir) are `InstanceSpec`'s.
 */

/** What happens to an instance nobody uses: paused (its state kept) or deleted. */
export type IdlePolicy = 'pause' | 'delete';

/** Kubernetes `resources` (quantities as written: `512Mi`, `500m`), handed to the cluster unchanged. */
export interface ResourceSpec {
  limits?: Readonly<Record<string, string | number>>;
  requests?: Readonly<Record<string, string | number>>;
}

/**
 * A readiness probe with the Kubernetes `Probe` fields (`httpGet`, `tcpSocket`, `exec`, timings), handed to
 * the cluster unchanged; a runtime that probes itself reads `httpGet.path` (the local runtime gets it as
 * `InstanceSpec.readinessPath`).
 */
export interface ProbeSpec {
  httpGet?: { path?: string; port?: number | string; [field: string]: unknown };
  [field: string]: unknown;
}

/** The container of a service; an absent field is absent in the pod too (the image's own default). */
export interface ContainerSpec {
  /** Container name. Absent: the runtime's own (`app`). */
  name?: string;
  /** Image reference; required by a runtime that runs images (Kubernetes), ignored locally. */
  image?: string;
  /** Entrypoint (replaces the image's). */
  command?: readonly string[];
  /** Arguments (replace the image's). */
  args?: readonly string[];
  /** Working directory as written (a pod resolves it in its image). */
  workingDir?: string;
  /** Extra environment, in order; the runtime adds `PORT`, `K_*` and the token variables after it. */
  env: Readonly<Record<string, string>>;
  /** The port the app listens on (`PORT`). Absent: 8080, Knative's default. */
  port?: number;
  resources?: ResourceSpec;
  readinessProbe?: ProbeSpec;
}

/** One service as a runtime sees it. */
export interface ServiceSpec {
  /** Service name (`K_SERVICE`); names the runtime's per-service objects and labels its instances. */
  name: string;
  /** `K_CONFIGURATION`. */
  configuration: string;
  /** `K_REVISION`. */
  revision: string;
  container: ContainerSpec;
  /** Instances kept started and paused, ready for a new session (Kubernetes: the SandboxWarmPool's replicas). */
  warmPool: number;
  /** What happens to an instance no session uses (Kubernetes: claims a restarted gateway left behind). */
  idle: {
    /** How long unused before the policy applies (ms); 0 = never. */
    afterMs: number;
    policy: IdlePolicy;
  };
}

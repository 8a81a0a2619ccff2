/**
 * @module
 * The `InstanceRuntime` interface: how the gateway starts, pauses, resumes and deletes instances.
 * No scheduling here (that is src/gateway/scheduler.ts). Implemented by local/local-runtime.ts
 * (processes); a Kubernetes runtime (agent-sandbox) comes later.
 */

/** Header on the gateway's own requests to an instance (readiness, warm-up); apps may leave them out of counters. */
export const PROBE_HEADER = 'x-tether-probe';

/** What to run for one instance, derived from the Knative container spec. */
export interface InstanceSpec {
  /** Instance name, `<service>-<5 random [a-z0-9]>`; also `TETHER_INSTANCE`. */
  name: string;
  /** Knative service name (`K_SERVICE`). */
  service: string;
  /** Knative configuration name (`K_CONFIGURATION`). */
  configuration: string;
  /** Knative revision name (`K_REVISION`). */
  revision: string;
  /** Executable and its arguments: container `command` followed by `args` (Kubernetes meaning). */
  argv: readonly string[];
  /** Extra environment (container `env`). */
  env: Readonly<Record<string, string>>;
  /** Working directory (absolute). */
  workingDir: string;
  /** When set, ready means `GET <path>` answers 2xx; otherwise the port accepting connections. */
  readinessPath?: string;
  /** How long the instance may take to become ready (ms). */
  startTimeoutMs: number;
  /**
   * The one session this instance is started for (`target: 1`): the Kubernetes runtime names its SandboxClaim
   * with `claim` and labels it with `keyHash` (a hash, never the key). Absent for shared and pre-started instances.
   */
  session?: InstanceSession;
  /** The workload token file the instance reads (`TETHER_TOKEN_FILE`); an isolated instance sees it read-only. */
  tokenFile?: string;
  /** What an isolated instance may see and use; ignored without isolation. */
  sandbox?: SandboxOptions;
}

/** The session an instance is started for. */
export interface InstanceSession {
  /** The session's stable claim/agent name. */
  claim: string;
  /** sha256 of the session key, 32 hex (sessions/session-hash.ts). */
  keyHash: string;
  /** Absolute end of the session (epoch ms), or null. */
  expiresAt: number | null;
}

/** Where an instance listens now (a resumed Kubernetes sandbox has a new pod, so a new address). */
export interface InstanceAddress {
  host: string;
  port: number;
}

/** Container limits (`resources.limits`) in base units. */
export interface ResourceLimits {
  memoryBytes?: number;
  /** Thousandths of a core (`500m` = 500). */
  cpuMillicores?: number;
  /** Most processes and threads at once. */
  pids?: number;
}

/** The isolation side of a service's spec. */
export interface SandboxOptions {
  /** Absolute host paths the instance may read, besides its workingDir and the files its command names. */
  readOnlyPaths: readonly string[];
  limits: ResourceLimits;
  /** Whether it may reach the public internet (never the host's own networks). */
  publicEgress: boolean;
}

/** A started, ready instance. */
export interface StartedInstance {
  name: string;
  /** OS process id (local runtime), the app's own pid. */
  pid: number | null;
  /** What tells this instance from a later one of the same name (the Kubernetes runtime: the claim uid). */
  incarnation?: string | null;
  /** Where the instance listens. */
  host: string;
  port: number;
}

/** Why an instance ended. */
export interface InstanceExit {
  code: number | null;
  signal: string | null;
  /** True when the runtime was asked to delete it. */
  requested: boolean;
}

/** One captured output line of an instance. */
export interface LogLine {
  /** ISO time the line was read. */
  time: string;
  stream: 'stdout' | 'stderr';
  line: string;
}

/** Runs instances. Implementations must never leave orphans after `close()`. */
export interface InstanceRuntime {
  /**
   * Starts an instance and resolves when it is ready.
   * @throws {Error} when it exits before ready or is not ready within `spec.startTimeoutMs` (it is then killed).
   */
  start(spec: InstanceSpec): Promise<StartedInstance>;
  /** Freezes the instance (keeps its state, uses no CPU). */
  pause(name: string): Promise<void>;
  /** Unfreezes a paused instance; resolves once it runs, with its address when that changed. */
  // biome-ignore lint/suspicious/noConfusingVoidType: runtimes whose address never changes resolve with nothing
  resume(name: string): Promise<void | InstanceAddress>;
  /** Deletes the instance: graceful stop, then forced after the grace period. Resolves when it is gone. */
  delete(name: string): Promise<void>;
  /** Captured output of a live or recently ended instance, oldest first; undefined when unknown. */
  logs(name: string): LogLine[] | undefined;
  /** Called once per instance when it ends for any reason (after start resolved or not). */
  onExit(listener: (name: string, exit: InstanceExit) => void): void;
  /** Deletes every instance. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * @module
 * The `InstanceRuntime` interface: how the gateway starts, pauses, resumes and deletes instances.
 * No scheduling here (that is the gateway's scheduler). Implemented by local/local-runtime.ts (processes,
 * optionally isolated) and kubernetes/kubernetes-runtime.ts (agent-sandbox claims). State is observed, not
 * assumed: `pause` resolves once the runtime saw the instance stopped, and `list`/`adopt` let a restarted
 * gateway take back the instances a previous one left running (the session store says which are still bound).
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
  /**
   * What tells this instance from a later one reusing its name or pid: the local runtime gives the process
   * start time (`/proc/<pid>/stat` field 22, clock ticks after boot, as a decimal string); the Kubernetes
   * runtime the SandboxClaim's uid. `adopt` takes an instance back only when it still matches; null when
   * the runtime has none.
   */
  incarnation: string | null;
  /** Where the instance listens (an address every gateway sharing the session store can reach). */
  host: string;
  port: number;
}

/** An instance as the runtime observes it now. */
export interface ObservedInstance extends StartedInstance {
  /** Knative service name. */
  service: string;
  /** `paused` only when the runtime saw it stopped (local: /proc state `T`). */
  state: 'running' | 'paused';
}

/** What a session store remembers of an instance, enough for `adopt` to find it again. */
export interface InstanceIdentity {
  name: string;
  service: string;
  pid: number | null;
  incarnation: string | null;
  host: string;
  port: number;
}

/** What an instance waits for the cluster to do. */
export interface ClusterWait {
  /** What the cluster has not done yet, e.g. `claim run-1 not bound`. */
  what: string;
  /** The cluster's own word on it (a condition's reason and message), when it has one. */
  reason?: string;
  /** What to check, e.g. `is the agent-sandbox controller running?` */
  hint: string;
  /** When the wait began (epoch ms, the runtime's clock). */
  since: number;
}

/** Why an instance ended. */
export interface InstanceExit {
  code: number | null;
  signal: string | null;
  /**
   * True only when it ended because `delete` (or `close`) was called for it. False when it ended by itself
   * (its app exited or crashed, the cluster or someone else ended it) and for every failed start (exited
   * before ready, crash-looping, not ready in time, refused by the cluster), even when the runtime itself
   * cleaned up after that start (killed what was left, deleted or released its claim).
   */
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
   * @throws {Error} when its app exits before ready (at once, as soon as the runtime sees it: a local exit, a
   *   container terminated or crash-looping) or it is not ready within `spec.startTimeoutMs` (it is then killed).
   */
  start(spec: InstanceSpec): Promise<StartedInstance>;
  /**
   * Pauses the instance (it uses no CPU); resolves once the pause is observed. What a pause keeps is the
   * runtime's: local freezes the process (SIGSTOP or the cgroup freezer: same process, its memory kept);
   * Kubernetes suspends the sandbox, which deletes its pod (resume starts a new pod at a new address).
   */
  pause(name: string): Promise<void>;
  /** Unfreezes a paused instance; resolves once it runs, with its address when that changed. */
  // biome-ignore lint/suspicious/noConfusingVoidType: runtimes whose address never changes resolve with nothing
  resume(name: string): Promise<void | InstanceAddress>;
  /** Deletes the instance: graceful stop, then forced after the grace period. Resolves when it is gone. */
  delete(name: string): Promise<void>;
  /** Captured output of a live or recently ended instance, oldest first; undefined when unknown. */
  logs(name: string): LogLine[] | undefined;
  /**
   * Called once per instance when it ends for any reason (after start resolved or not): its app exits (a
   * local process, a sandbox's container that terminates or crash-loops), it is deleted, or it is ended from
   * outside. Not for a start refused before anything ran. See `InstanceExit.requested` for who asked.
   */
  onExit(listener: (name: string, exit: InstanceExit) => void): void;
  /**
   * Instances that are alive but managed by no live runtime (left by a gateway that stopped or crashed),
   * observed now. Records of instances found dead are cleaned up on the way.
   */
  list(): Promise<ObservedInstance[]>;
  /**
   * Takes over a listed instance when it is still the one in `record` (same pid and incarnation): from then on
   * it is managed as if this runtime had started it (pause, resume, delete, logs, onExit).
   * @returns the instance as observed, or undefined when it is gone or is not the recorded one (a stale record)
   */
  adopt(record: InstanceIdentity): Promise<ObservedInstance | undefined>;
  /**
   * True when leftovers nobody adopts are the runtime's own to keep or reap (Kubernetes: a claim is found again
   * by its session's next request, or deleted by the services' idle policy): a restarted gateway then leaves
   * unbound leftovers alone instead of deleting them. Absent = false (local: the gateway deletes them).
   */
  readonly reapsLeftovers?: boolean;
  /**
   * What the instance's start, pause or resume is waiting for the cluster to do, as observed now; undefined
   * when it waits on nothing. Absent = the runtime waits on no cluster (local). Shown by the admin API and
   * logged when a request's cluster deadline passes.
   */
  waitingOn?(name: string): ClusterWait | undefined;
  /** Deletes every instance. Safe to call twice. */
  close(): Promise<void>;
  /**
   * Stops managing instances without stopping them, so they outlive this process and a later runtime can
   * `adopt` them (a gateway whose session store survives it). Safe to call twice; `close` after it does nothing.
   */
  detach(): Promise<void>;
}

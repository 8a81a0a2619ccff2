/**
 * @module
 * The seam between the local runtime and isolation: an `Isolation` prepares each instance (its
 * network, cgroups, folders) and says how to spawn it; the `Sandbox` it returns pauses, resumes,
 * signals and finally releases that instance. Types only; namespaces-isolation.ts implements them,
 * local-runtime.ts uses them (no isolation = plain process groups, its own code).
 */
import type { ChildProcess } from 'node:child_process';
import type { InstanceSpec } from '../../runtime.ts';

/** The files an instance's stdout and stderr are appended to. */
export interface OutputFiles {
  out: string;
  err: string;
}

/** How the runtime spawns an isolated instance. */
export interface LaunchPlan {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /**
   * Starts the plan in a process that already waits inside the instance's cgroups (waiting-launcher.ts),
   * its output appended to `output`; absent, the runtime spawns `file` itself.
   */
  startWaiting?(output: OutputFiles): ChildProcess;
}

/** One isolated instance. */
export interface Sandbox {
  /** Where the gateway reaches it. */
  readonly host: string;
  /** The port it listens on (`PORT`). */
  readonly port: number;
  /** The spawn that starts it, given the environment the runtime built (PORT, K_*, …). */
  launch(argv: readonly string[], env: Record<string, string>): LaunchPlan;
  /** Called once spawned (`pid` = the launcher's process, leader of the group). */
  spawned(pid: number): void;
  /** Freezes the whole instance; resolves when it is frozen. */
  pause(): Promise<void>;
  /** Thaws it; resolves when it runs. */
  resume(): Promise<void>;
  /** Sends `signal` to every process of the instance, letting frozen ones run to handle it. */
  signal(signal: NodeJS.Signals): void;
  /** After the instance ended: removes its network, cgroups and work folder. Safe twice. */
  release(): Promise<void>;
}

/** Makes sandboxes. */
export interface Isolation {
  /** What is in force, for logs and the admin API. */
  readonly mode: 'namespaces';
  prepare(spec: InstanceSpec): Promise<Sandbox>;
  /** Removes what the isolation set up for all instances (call after every sandbox was released). */
  close(): Promise<void>;
}

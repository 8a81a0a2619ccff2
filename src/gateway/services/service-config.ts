/**
 * @module
 * The gateway's view of one Knative sandbox Service, after validation (durations in ms, counts as
 * integers, container resolved for the local runtime), plus the annotation names it reads and
 * `ManifestError`. Types and constants only; parse-service.ts builds these.
 */
import type { SandboxOptions } from '../../runtime/runtime.ts';

/** Annotation names (spec.template.metadata.annotations). */
export const ANNOTATIONS = Object.freeze({
  workloadType: 'serving.knative.dev/workload-type',
  affinity: 'serving.knative.dev/session-affinity',
  cookie: 'serving.knative.dev/session-affinity-cookie',
  timeout: 'serving.knative.dev/session-timeout',
  expiry: 'serving.knative.dev/session-expiry',
  idlePolicy: 'serving.knative.dev/sandbox-idle-policy',
  warmPool: 'serving.knative.dev/warm-pool',
  metric: 'autoscaling.knative.dev/metric',
  target: 'autoscaling.knative.dev/target',
  minScale: 'autoscaling.knative.dev/min-scale',
  maxScale: 'autoscaling.knative.dev/max-scale',
  /** Comma-separated paths (relative to the manifest's folder) an isolated instance may read besides its own. */
  readOnlyPaths: 'tether.dev/read-only-paths',
  /** "true": an isolated instance may reach the public internet (never the machine's own networks). */
  publicEgress: 'tether.dev/public-egress',
  /** Ours, not Knative's: only session keys the gateway issued (HMAC-signed) are accepted. */
  signedKeys: 'tether.dev/signed-session-keys',
  /**
   * Ours: "true" adds a new session's cookie to the Cookie header of its first forwarded request (by default
   * that header goes as the client sent it, as the seed shows; the app reads the new key from X-Session-Key).
   */
  addSessionCookie: 'tether.dev/add-session-cookie',
});

/** The `resources.limits` key of the pids limit (Kubernetes has none of its own; the local runtime reads it). */
export const PIDS_LIMIT = 'tether.dev/pids';

/** Defaults when an annotation is absent. */
export const SERVICE_DEFAULTS = Object.freeze({
  cookie: 'tether-session',
  sessionTimeoutMs: 30 * 60_000,
  idlePolicy: 'delete' as IdlePolicy,
  target: 1,
});

/** What happens to an idle session's instance. */
export type IdlePolicy = 'pause' | 'delete';

/** The container to run, resolved for the local runtime. */
export interface ContainerConfig {
  /** `image`, ignored by the local runtime (one warning). */
  image: string | undefined;
  /** `command` followed by `args`. */
  argv: string[];
  env: Record<string, string>;
  /** Absolute; relative `workingDir` is resolved against the manifest's folder (its default). */
  workingDir: string;
  /** `ports[0].containerPort`, informative only locally. */
  containerPort: number | undefined;
  /** `readinessProbe.httpGet.path`. */
  readinessPath: string | undefined;
  /** The container as the manifest gives it (the Kubernetes runtime builds its SandboxTemplate from it). */
  raw: Readonly<Record<string, unknown>>;
  /** What an isolated instance may see and use: `resources.limits` and the tether.dev annotations. */
  sandbox: SandboxOptions;
}

/** One validated sandbox service. */
export interface ServiceConfig {
  name: string;
  namespace: string;
  /** `K_CONFIGURATION`. */
  configuration: string;
  /** `K_REVISION`: template name or `<name>-00001`. */
  revision: string;
  /** Where it was read: file path and 1-based document number. */
  source: { file: string; document: number };
  affinity: boolean;
  cookieName: string;
  /**
   * `tether.dev/signed-session-keys`: true = only gateway-issued (signed) session keys are accepted, false =
   * any key a client sends is its session; null = the gateway's default (`--signed-session-keys`).
   */
  signedSessionKeys: boolean | null;
  /**
   * `tether.dev/add-session-cookie`: a new session's first request reaches the app with `<cookie>=<key>` added
   * to its Cookie header. False (the default): the Cookie header goes unchanged; the key is in X-Session-Key.
   */
  addSessionCookie: boolean;
  /** Idle timeout (ms); 0 = never idle. */
  sessionTimeoutMs: number;
  /** Absolute session life (ms), or null. */
  sessionExpiryMs: number | null;
  idlePolicy: IdlePolicy;
  /** Paused, unbound instances kept ready. */
  warmPool: number;
  /** Sessions per instance. */
  target: number;
  minScale: number;
  /** Max instances serving sessions; 0 = unbounded. */
  maxScale: number;
  container: ContainerConfig;
}

/** A manifest problem, naming the file, the document (1-based; 0 = the file or folder itself) and the field. */
export class ManifestError extends Error {
  readonly file: string;
  readonly document: number;
  readonly field: string;
  constructor(file: string, document: number, field: string, problem: string) {
    super(document > 0 ? `${file}: document ${document}: ${field}: ${problem}` : `${file}: ${field}: ${problem}`);
    this.name = 'ManifestError';
    this.file = file;
    this.document = document;
    this.field = field;
  }
}

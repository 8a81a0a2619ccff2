/**
 * @module
 * The `SessionStore` interface: the source of truth of session bindings (session -> instance) and of the
 * instances that serve them. The gateway decides where a new session goes, but a binding exists only once
 * `bind` says so (atomic: a session gets an instance only if it has none, an instance gets at most `target`
 * sessions), so several gateways on one store never split a session. Implemented by memory-store.ts and
 * redis/redis-store.ts; every implementation must pass test/sessions/conformance.ts.
 */
import { createHash } from 'node:crypto';

/** What a session is doing, as the admin API shows it. */
export type SessionState = 'active' | 'idle' | 'paused';

/** One session bound to one instance. Times are epoch milliseconds. */
export interface SessionRecord {
  /** `sessionId(key)`: a hash of the session key. The raw key is a bearer secret and is never stored. */
  id: string;
  /** The Knative service name. */
  service: string;
  /** The instance the session is bound to for its life. */
  instance: string;
  /** Stable agent/claim name derived from service + key (see claim-name.ts); same across instances. */
  claim: string;
  /** Current state. */
  state: SessionState;
  /** When the session was bound (ms). */
  createdAt: number;
  /** When the last request of the session started or finished (ms). */
  lastActive: number;
  /** When it goes idle (`lastActive + session-timeout`, ms), or null when the service has no idle timeout. */
  idleAt: number | null;
  /** Absolute end of the session (ms), or null when the service has no `session-expiry`. */
  expiresAt: number | null;
  /** Id of the gateway that bound it (and manages its instance). */
  gateway: string;
}

/** The fields `touch` may change. */
export type SessionPatch = Partial<Pick<SessionRecord, 'state' | 'lastActive' | 'idleAt'>>;

/** One binding of a session, as a read or a bind saw it: its instance and creation time. */
export type SessionBinding = Pick<SessionRecord, 'instance' | 'createdAt'>;

/** One instance as the store keeps it: enough to route to it from any gateway and to adopt it after a restart. */
export interface InstanceRecord {
  name: string;
  service: string;
  /** Observed state: `paused` only once the runtime saw the pause. */
  state: 'running' | 'paused';
  pid: number | null;
  /** Process start time (local runtime) or pod uid: tells a reused pid from the recorded process. */
  incarnation: string | null;
  host: string;
  port: number;
  /** True while it sits unbound in the warm pool. */
  warm: boolean;
  /** Id of the gateway that manages it. */
  gateway: string;
}

/** What `bind` did. */
export type BindResult =
  | { outcome: 'bound'; record: SessionRecord }
  /** The session was bound already (by this gateway or another): that binding holds. */
  | { outcome: 'exists'; record: SessionRecord }
  /** The instance has `target` sessions already. */
  | { outcome: 'full' };

/** Persistence of sessions and instances. All methods are safe to call concurrently. */
export interface SessionStore {
  /** True when bindings survive a gateway restart (Redis); false for the in-process memory store. */
  readonly durable: boolean;
  /**
   * Resolves once the store can be used (Redis: first connection made); rejects only on `close`.
   * Until then every other call may fail with 503 `unavailable`.
   */
  ready(): Promise<void>;
  /**
   * Binds `record.id` to `record.instance` when the session has no live binding and the instance has fewer
   * than `target` live sessions; atomic across every gateway sharing the store. Expired sessions (expiresAt
   * <= now) count as absent.
   * @throws {TetherError} 503 `unavailable` when the store cannot be reached (the binding is not made)
   */
  bind(record: SessionRecord, target: number): Promise<BindResult>;
  /** The live record of a session (undefined when absent or expired). */
  get(service: string, id: string): Promise<SessionRecord | undefined>;
  /** Updates state, lastActive and/or idleAt of an existing record; no-op when it does not exist. */
  touch(service: string, id: string, patch: SessionPatch): Promise<void>;
  /**
   * Ends a session: removes its record and its place on the instance; true when one existed. With `only`, ends
   * just that binding (same instance and createdAt), not one made since (maybe by another gateway).
   */
  end(service: string, id: string, only?: SessionBinding): Promise<boolean>;
  /** Live records (not expired), optionally of one service, ordered by createdAt then id. */
  list(service?: string): Promise<SessionRecord[]>;
  /** Creates or replaces an instance record. */
  putInstance(record: InstanceRecord): Promise<void>;
  /** Removes an instance record (its sessions must be ended by the caller). */
  deleteInstance(service: string, name: string): Promise<void>;
  /** One instance record, or undefined. */
  getInstance(service: string, name: string): Promise<InstanceRecord | undefined>;
  /** Every instance record, optionally of one service, ordered by name. */
  listInstances(service?: string): Promise<InstanceRecord[]>;
  /**
   * Registers what to run when the store finds it lost its data while the gateway ran (Redis restarted without
   * persistence, or flushed): `restore` writes back the caller's live sessions and instances (a rejection makes
   * the store try again later). Absent on stores that cannot lose data without the gateway (memory).
   */
  onDataLost?(restore: () => Promise<void>): void;
  /** Releases connections; further calls may fail. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * The id a session is stored under: base64url SHA-256 of the key. The key is random (128 bits) or chosen by
 * the client; either way the store and its admin views hold only this hash.
 */
export function sessionId(key: string): string {
  return createHash('sha256').update(key).digest('base64url');
}

/** True when a record with `expiresAt` is past it at `now`. */
export function isExpired(record: { expiresAt: number | null }, now: number): boolean {
  return record.expiresAt !== null && now >= record.expiresAt;
}

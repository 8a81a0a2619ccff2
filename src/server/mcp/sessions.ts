/**
 * @module
 * MCP sessions (Streamable HTTP with `Mcp-Session-Id`): each session has its own transport and
 * server, belongs to the agent that opened it (another key's request with its id is not found), and
 * may hold the lease `agent_resume` took — its writes carry that epoch without the model passing it,
 * the lease is renewed as the session is used, and released when the session closes (DELETE /mcp,
 * idle for `idleMs`, or server shutdown). Each owner has its own cap of open sessions (at it, its
 * own longest idle one is closed); when the server-wide bound is reached new sessions are refused,
 * never made room for by closing another owner's (which would end that owner's lease). Used by
 * `mcp-route.ts`.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthContext } from '../../auth/auth-context.ts';
import type { Clock } from '../../common/clock.ts';
import { unavailable } from '../../common/errors.ts';

/** The lease a session holds. */
export interface SessionLease {
  namespace: string;
  epoch: number;
  ttlMs: number;
  /** Epoch ms. */
  expiresAt: number;
}

/** What a tool sees of its MCP session. */
export interface McpSessionContext {
  /** The `Mcp-Session-Id`. */
  readonly id: string;
  /** The lease `agent_resume` took for this session, or null. */
  lease: SessionLease | null;
}

/** One open MCP session. */
export interface McpSession extends McpSessionContext {
  transport: StreamableHTTPServerTransport;
  server: Server;
  /** Who opened it: requests with its id from another agent (or admin key) are not its own. */
  owner: { tenant: string; namespace: string | null; keyId: string };
  /** Epoch ms of the last request. */
  lastSeen: number;
}

/** Options of `McpSessions`. */
export interface McpSessionsOptions {
  clock: Clock;
  /** Close a session after this long without a request, ms. @default 1800000 (30 min) */
  idleMs?: number;
  /** Most open sessions on this server; past it a new one is refused (503). @default 1000 */
  maxSessions?: number;
  /** Most open sessions of one owner (agent namespace, or admin key); its longest idle is closed to make room. @default 100 */
  maxSessionsPerOwner?: number;
  /** Ends a session's lease (called on close; errors are the caller's to log). */
  release: (lease: SessionLease) => Promise<void>;
}

/** The open sessions of one server. */
export class McpSessions {
  readonly #sessions = new Map<string, McpSession>();
  readonly #clock: Clock;
  readonly #idleMs: number;
  readonly #max: number;
  readonly #maxPerOwner: number;
  readonly #release: (lease: SessionLease) => Promise<void>;
  readonly #sweep: NodeJS.Timeout;

  constructor(options: McpSessionsOptions) {
    this.#clock = options.clock;
    this.#idleMs = options.idleMs ?? 30 * 60_000;
    this.#max = options.maxSessions ?? 1000;
    this.#maxPerOwner = options.maxSessionsPerOwner ?? 100;
    if (!(this.#maxPerOwner >= 1)) {
      throw new Error(`Cannot keep MCP sessions as 'maxSessionsPerOwner' must be ≥ 1: got ${this.#maxPerOwner}`);
    }
    this.#release = options.release;
    this.#sweep = setInterval(() => void this.closeIdle(), Math.min(60_000, this.#idleMs));
    this.#sweep.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Whether `auth` may use a session opened by `owner`: the same agent namespace, or the same admin key. */
  static owns(owner: McpSession['owner'], auth: AuthContext): boolean {
    if (owner.namespace !== null) return owner.tenant === auth.tenant && owner.namespace === auth.namespace;
    return owner.keyId === auth.keyId;
  }

  /**
   * Makes room for one more session of `auth` before it is opened: when `auth` is at its own cap,
   * its longest idle session is closed (an agent that reconnects without DELETE /mcp keeps working).
   * Another owner's session is never closed for it.
   * @throws {TetherError} 503 `unavailable` when `maxSessions` are open and `auth` is below its cap
   */
  async makeRoom(auth: AuthContext): Promise<void> {
    const own = [...this.#sessions.values()].filter((s) => McpSessions.owns(s.owner, auth));
    if (own.length >= this.#maxPerOwner) {
      const oldest = own.sort((a, b) => a.lastSeen - b.lastSeen)[0];
      if (oldest) await this.close(oldest.id);
      return;
    }
    if (this.#sessions.size >= this.#max) {
      throw unavailable(
        'too many MCP sessions open on this server; close unused ones (DELETE /mcp) or retry later',
        30,
      );
    }
  }

  /**
   * Records a new session (after its initialize; `makeRoom` came before). Initializes in flight at
   * once may take the count a little past the caps until the next `makeRoom` of that owner.
   */
  add(session: McpSession): void {
    this.#sessions.set(session.id, session);
  }

  /** The session with `id` if `auth` owns it (touching it), else undefined. */
  find(id: string, auth: AuthContext): McpSession | undefined {
    const s = this.#sessions.get(id);
    if (!s || !McpSessions.owns(s.owner, auth)) return undefined;
    s.lastSeen = this.#clock.now();
    return s;
  }

  /** Forgets a session whose transport closed, releasing its lease. */
  async closed(id: string): Promise<void> {
    const s = this.#sessions.get(id);
    if (!s) return;
    this.#sessions.delete(id);
    const lease = s.lease;
    s.lease = null;
    if (lease) await this.#release(lease);
  }

  /** Closes a session: its transport and server, then its lease. */
  async close(id: string): Promise<void> {
    const s = this.#sessions.get(id);
    if (!s) return;
    await this.closed(id);
    await s.transport.close().catch(() => {});
    await s.server.close().catch(() => {});
  }

  /** Closes the sessions idle for `idleMs` or more. */
  async closeIdle(): Promise<void> {
    const cutoff = this.#clock.now() - this.#idleMs;
    for (const s of [...this.#sessions.values()]) if (s.lastSeen <= cutoff) await this.close(s.id);
  }

  /** Closes every session (server shutdown) and stops the sweep. */
  async closeAll(): Promise<void> {
    clearInterval(this.#sweep);
    for (const id of [...this.#sessions.keys()]) await this.close(id);
  }
}

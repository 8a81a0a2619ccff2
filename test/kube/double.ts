/**
 * @module
 * An HTTPS double of the Kubernetes API server for tests: TokenReview and the objects of `rest.ts` (Pod,
 * Sandbox, SandboxClaim, SandboxWarmPool, SandboxTemplate) in the real wire format, two users (the memory
 * server's and the gateway's token, each with its Role from `rbac.ts`), latency and outages, call counting
 * (with each write's body), CRD defaults and pruning on every write (`crd-schemas.ts`), and optionally the
 * agent-sandbox controllers (`controller.ts`; `controller.halt()` stops them, the API server going on). Writes kubeconfigs for @kubernetes/client-node.
 * Start it with `startKubeDouble()`, `close()` it after. Object and token control comes from `FakeCluster`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { makeCerts } from './certs.ts';
import { type ClusterOptions, FakeCluster } from './cluster.ts';
import { SandboxController } from './controller.ts';
import { forbiddenStatus, statusBody } from './objects.ts';
import { allows, GATEWAY_RULES, MEMORY_SERVER_RULES, type PolicyRule } from './rbac.ts';
import { parseObjectRequest, serveObject, type Verb } from './rest.ts';

/** Options of `startKubeDouble`. */
export interface KubeDoubleOptions extends ClusterOptions {
  /** Namespaces where the memory server may `get` (RBAC emulation); '*' for all. @default '*' */
  rbacNamespaces?: string[] | '*';
  /** Whether the memory server may `create tokenreviews`. @default true */
  canReviewTokens?: boolean;
  /**
   * Run the agent-sandbox controllers: pools fill, claims adopt or get sandboxes, Suspended stops the pod,
   * and each pod is a local process on its own loopback address. @default false
   */
  controllers?: boolean;
  /**
   * How long a pod takes to start its process, as scheduling and the container runtime take on a node. The
   * bench sets it so a refill's process start does not fall inside a measured request. @default 0
   */
  podStartDelayMs?: number;
}

/** One request the double served. */
export interface CallRecord {
  verb: Verb | 'other';
  /** Plural, e.g. `tokenreviews`, `pods`, `sandboxes`, `sandboxclaims`. */
  resource: string;
  group: string;
  namespace?: string;
  name?: string;
  status: number;
  /** The JSON body of a create, update or patch, as sent. */
  body?: unknown;
}

/** How the double is out of order: connection refused, or every answer an error status. */
export type OutageMode = 'refuse' | 'error';

/** The user the double's kubeconfig token stands for (shown in Forbidden messages). */
export const MEMORY_SERVER_USER = 'system:serviceaccount:tether:tether-memory';
/** The user the gateway's token stands for. */
export const GATEWAY_USER = 'system:serviceaccount:tether:tether-gateway';

const REVIEW_PATH = '/apis/authentication.k8s.io/v1/tokenreviews';
const WRITES: ReadonlySet<Verb> = new Set(['create', 'update', 'patch']);

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** The API-server double; the fake cluster's control methods plus the server's own. */
export class KubeDouble extends FakeCluster {
  /** `https://127.0.0.1:<port>` */
  url = '';
  /** A kubeconfig file that trusts the double's CA and carries its bearer token. */
  kubeconfigPath = '';
  caPem = '';
  /** The memory server's bearer token. */
  readonly bearerToken = randomBytes(24).toString('hex');
  /** The gateway's bearer token. */
  readonly gatewayToken = randomBytes(24).toString('hex');
  /** A kubeconfig with the gateway's token. */
  gatewayKubeconfigPath = '';
  /** The agent-sandbox controllers, when started with `controllers: true`. */
  readonly controller: SandboxController | undefined;
  /** Every request served, oldest first. */
  readonly calls: CallRecord[] = [];
  #server: Server | undefined;
  #port = 0;
  #dir = '';
  #latencyMs = 0;
  #outage: OutageMode | null = null;
  #outageStatus = 503;
  readonly #watches = new Set<ServerResponse>();
  #rbacNamespaces: string[] | '*';
  #canReview: boolean;
  readonly #held = new Set<ServerResponse>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #closed: Promise<void> | undefined;

  constructor(options: KubeDoubleOptions = {}) {
    super(options);
    this.#rbacNamespaces = options.rbacNamespaces ?? '*';
    this.#canReview = options.canReviewTokens ?? true;
    this.controller = options.controllers ? new SandboxController(this.store, options.podStartDelayMs) : undefined;
  }

  /** Make certificates, listen on 127.0.0.1, write the kubeconfig. Called by `startKubeDouble`. */
  async start(): Promise<this> {
    this.#dir = await mkdtemp(join(tmpdir(), 'tether-kube-double-'));
    const certs = await makeCerts(this.#dir);
    this.caPem = certs.caPem;
    this.#server = createServer({ cert: certs.certPem, key: certs.keyPem }, (req, res) => this.#onRequest(req, res));
    await this.#listen(0);
    this.#port = (this.#server.address() as AddressInfo).port;
    this.url = `https://127.0.0.1:${this.#port}`;
    this.kubeconfigPath = join(this.#dir, 'kubeconfig');
    await writeFile(this.kubeconfigPath, this.kubeconfig());
    this.gatewayKubeconfigPath = join(this.#dir, 'gateway-kubeconfig');
    await writeFile(this.gatewayKubeconfigPath, this.kubeconfig({ token: this.gatewayToken }));
    this.controller?.start();
    return this;
  }

  /**
   * The kubeconfig text (YAML). Tests may vary it: no CA (to see TLS refused) or another token (to see 401).
   * @param options.withCa include `certificate-authority-data` @default true
   * @param options.token the bearer token @default the one the double accepts
   */
  kubeconfig(options: { withCa?: boolean; token?: string } = {}): string {
    const cluster: Record<string, string> = { server: this.url };
    if (options.withCa ?? true) cluster['certificate-authority-data'] = Buffer.from(this.caPem).toString('base64');
    return stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'kube-double', cluster }],
      users: [{ name: 'tether-memory', user: { token: options.token ?? this.bearerToken } }],
      contexts: [{ name: 'kube-double', context: { cluster: 'kube-double', user: 'tether-memory' } }],
      'current-context': 'kube-double',
    });
  }

  /** Delay every answer by `ms` (Infinity: never answer). 0 restores normal service. */
  setLatency(ms: number): void {
    this.#latencyMs = ms;
  }

  /**
   * Go out of order: 'refuse' closes the port (connection refused), 'error' answers `status` to everything.
   * Open watches end either way.
   */
  async goDown(mode: OutageMode = 'refuse', status = 503): Promise<void> {
    this.#outage = mode;
    this.#outageStatus = status;
    for (const w of this.#watches) w.end();
    if (mode === 'refuse') await this.#stopListening();
  }

  /** Serve again on the same port. */
  async goUp(): Promise<void> {
    const wasRefusing = this.#outage === 'refuse';
    this.#outage = null;
    if (wasRefusing) await this.#listen(this.#port);
  }

  /** Change the emulated RBAC of the memory server. */
  setRbac(rbac: { namespaces?: string[] | '*'; canReviewTokens?: boolean }): void {
    if (rbac.namespaces !== undefined) this.#rbacNamespaces = rbac.namespaces;
    if (rbac.canReviewTokens !== undefined) this.#canReview = rbac.canReviewTokens;
  }

  /** How many served calls match every given field. */
  countCalls(filter: Partial<CallRecord> = {}): number {
    return this.calls.filter((c) =>
      Object.entries(filter).every(([k, v]) => (c as unknown as Record<string, unknown>)[k] === v),
    ).length;
  }

  /**
   * Resolves with the first value `check` returns, re-checked after every write to the store (no polling).
   * @throws Error naming `what` after `timeoutMs` @default 10000
   */
  until<T>(what: string, check: () => T | undefined, timeoutMs = 60_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const first = check();
      if (first !== undefined) return resolve(first);
      const timer = setTimeout(() => {
        stop();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const stop = this.store.subscribe(() => {
        const v = check();
        if (v === undefined) return;
        clearTimeout(timer);
        stop();
        resolve(v);
      });
    });
  }

  /** Forget the recorded calls. */
  resetCalls(): void {
    this.calls.length = 0;
  }

  /** Stop serving, drop held requests, delete the temp dir. Safe to call twice. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      for (const t of this.#timers) clearTimeout(t);
      this.#timers.clear();
      await this.controller?.stop();
      await this.#stopListening();
      if (this.#dir) await rm(this.#dir, { recursive: true, force: true });
    })();
    return this.#closed;
  }

  #listen(port: number): Promise<void> {
    const server = this.#server!;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  async #stopListening(): Promise<void> {
    const server = this.#server;
    if (!server?.listening) return;
    for (const res of this.#held) res.destroy();
    this.#held.clear();
    for (const w of this.#watches) w.destroy();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = () => {
        if (res.destroyed) return;
        const [status, body, call] = this.#route(req, res, Buffer.concat(chunks).toString('utf8'));
        if (call) this.calls.push({ ...call, status });
        if (body === undefined) return; // a watch streams by itself
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (this.#latencyMs === Number.POSITIVE_INFINITY) this.#held.add(res);
      else if (this.#latencyMs > 0) {
        const t = setTimeout(() => {
          this.#timers.delete(t);
          answer();
        }, this.#latencyMs);
        this.#timers.add(t);
      } else answer();
    });
  }

  #route(req: IncomingMessage, res: ServerResponse, raw: string): [number, unknown, Omit<CallRecord, 'status'> | null] {
    const url = new URL(req.url ?? '/', 'https://x');
    const path = url.pathname;
    const auth = req.headers.authorization;
    const user =
      auth === `Bearer ${this.bearerToken}` ? 'memory' : auth === `Bearer ${this.gatewayToken}` ? 'gateway' : null;
    if (!user) return [401, statusBody(401, 'Unauthorized', 'Unauthorized'), null];
    if (this.#outage === 'error') {
      const s = this.#outageStatus;
      const reason = s === 500 ? 'InternalError' : 'ServiceUnavailable';
      return [s, statusBody(s, reason, 'the server is currently unable to handle the request'), null];
    }
    if (path === REVIEW_PATH) return this.#review(req, raw, user);
    const r = parseObjectRequest(req.method ?? 'GET', path, url.searchParams);
    if (!r) return [404, statusBody(404, 'NotFound', 'the server could not find the requested resource'), null];
    const call = {
      verb: r.verb,
      resource: r.type.plural,
      group: r.type.group,
      namespace: r.namespace,
      name: r.name,
      ...(WRITES.has(r.verb) ? { body: parseJson(raw) } : {}),
    };
    const rules: readonly PolicyRule[] = user === 'memory' ? MEMORY_SERVER_RULES : GATEWAY_RULES;
    const resource = r.status ? `${r.type.plural}/status` : r.type.plural;
    const inNamespace = this.#rbacNamespaces === '*' || this.#rbacNamespaces.includes(r.namespace);
    if (!inNamespace || !allows(rules, r.verb, r.type.group, resource)) {
      const who = user === 'memory' ? MEMORY_SERVER_USER : GATEWAY_USER;
      return [403, forbiddenStatus(who, r.verb, r.type, r.namespace, r.name), call];
    }
    const answer = serveObject(this.store, r, req, res, raw, url.searchParams, this.#watches);
    return [answer.status, answer.body, call];
  }

  #review(
    req: IncomingMessage,
    raw: string,
    user: 'memory' | 'gateway',
  ): [number, unknown, Omit<CallRecord, 'status'> | null] {
    const call = { verb: 'create', resource: 'tokenreviews', group: 'authentication.k8s.io' } as const;
    if (req.method !== 'POST') return [405, statusBody(405, 'MethodNotAllowed', 'method not allowed'), call];
    if (!this.#canReview || user !== 'memory') {
      const who = user === 'memory' ? MEMORY_SERVER_USER : GATEWAY_USER;
      return [
        403,
        forbiddenStatus(who, 'create', { group: call.group, plural: 'tokenreviews' }, undefined, undefined),
        call,
      ];
    }
    let review: { spec?: { token?: unknown; audiences?: unknown } };
    try {
      review = JSON.parse(raw);
    } catch {
      return [400, statusBody(400, 'BadRequest', 'the body of the request was in an unknown format'), call];
    }
    const spec = review.spec ?? {};
    const status = this.reviewToken(spec);
    return [
      201,
      {
        kind: 'TokenReview',
        apiVersion: 'authentication.k8s.io/v1',
        metadata: { creationTimestamp: null },
        spec,
        status,
      },
      call,
    ];
  }
}

/**
 * Start a double on 127.0.0.1 with a fresh CA and kubeconfig.
 * @example
 * let kube: KubeDouble;
 * before(async () => { kube = await startKubeDouble(); });
 * after(() => kube.close());
 * const pod = kube.createClaim('run-1', { warmPool: true });
 * const token = kube.issueToken(pod, { audience: 'tether' });
 */
export async function startKubeDouble(options: KubeDoubleOptions = {}): Promise<KubeDouble> {
  const double = new KubeDouble(options);
  try {
    return await double.start();
  } catch (err) {
    await double.close();
    throw err;
  }
}

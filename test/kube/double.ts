/**
 * @module
 * An HTTPS double of the Kubernetes API server for tests: TokenReview, Pod, Sandbox, SandboxClaim,
 * SandboxWarmPool in the real wire format, bearer-token auth, optional RBAC refusals, latency and outages,
 * call counting. Writes a kubeconfig (CA data + token) for @kubernetes/client-node. Start it in `before`
 * with `startKubeDouble()`, `close()` it in `after`. Object and token control comes from `FakeCluster`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { POD, type ResourceType, SANDBOX, SANDBOX_CLAIM, SANDBOX_WARM_POOL } from '../../src/kube/agent-sandbox.ts';
import { makeCerts } from './certs.ts';
import { type ClusterOptions, FakeCluster } from './cluster.ts';
import { forbiddenStatus, notFoundStatus, statusBody } from './objects.ts';

/** Options of `startKubeDouble`. */
export interface KubeDoubleOptions extends ClusterOptions {
  /** Namespaces where the memory server may `get` (RBAC emulation); '*' for all. @default '*' */
  rbacNamespaces?: string[] | '*';
  /** Whether the memory server may `create tokenreviews`. @default true */
  canReviewTokens?: boolean;
}

/** One request the double served. */
export interface CallRecord {
  verb: 'create' | 'get' | 'list' | 'other';
  /** Plural, e.g. `tokenreviews`, `pods`, `sandboxes`, `sandboxclaims`. */
  resource: string;
  group: string;
  namespace?: string;
  name?: string;
  status: number;
}

/** How the double is out of order. */
export type OutageMode = 'refuse' | 'error';

/** The user the double's kubeconfig token stands for (shown in Forbidden messages). */
export const MEMORY_SERVER_USER = 'system:serviceaccount:tether:tether-memory';

const CUSTOM_TYPES: ResourceType[] = [SANDBOX, SANDBOX_CLAIM, SANDBOX_WARM_POOL];
const REVIEW_PATH = '/apis/authentication.k8s.io/v1/tokenreviews';
const CORE_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/([^/]+)(?:\/([^/]+))?$/;
const GROUP_PATH = /^\/apis\/([^/]+)\/([^/]+)\/namespaces\/([^/]+)\/([^/]+)(?:\/([^/]+))?$/;

/** The API-server double; the fake cluster's control methods plus the server's own. */
export class KubeDouble extends FakeCluster {
  /** `https://127.0.0.1:<port>` */
  url = '';
  /** A kubeconfig file that trusts the double's CA and carries its bearer token. */
  kubeconfigPath = '';
  caPem = '';
  /** The bearer token the double accepts. */
  readonly bearerToken = randomBytes(24).toString('hex');
  /** Every request served, oldest first. */
  readonly calls: CallRecord[] = [];
  #server: Server | undefined;
  #port = 0;
  #dir = '';
  #latencyMs = 0;
  #outage: OutageMode | null = null;
  #rbacNamespaces: string[] | '*';
  #canReview: boolean;
  readonly #held = new Set<ServerResponse>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #closed: Promise<void> | undefined;

  constructor(options: KubeDoubleOptions = {}) {
    super(options);
    this.#rbacNamespaces = options.rbacNamespaces ?? '*';
    this.#canReview = options.canReviewTokens ?? true;
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

  /** Go out of order: 'refuse' closes the port (connection refused), 'error' answers 503 to everything. */
  async goDown(mode: OutageMode = 'refuse'): Promise<void> {
    this.#outage = mode;
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

  /** Forget the recorded calls. */
  resetCalls(): void {
    this.calls.length = 0;
  }

  /** Stop serving, drop held requests, delete the temp dir. Safe to call twice. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      for (const t of this.#timers) clearTimeout(t);
      this.#timers.clear();
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
        const [status, body, call] = this.#route(req, Buffer.concat(chunks).toString('utf8'));
        if (call) this.calls.push({ ...call, status });
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

  #route(req: IncomingMessage, raw: string): [number, unknown, Omit<CallRecord, 'status'> | null] {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    if (req.headers.authorization !== `Bearer ${this.bearerToken}`) {
      return [401, statusBody(401, 'Unauthorized', 'Unauthorized'), null];
    }
    if (this.#outage === 'error') {
      return [503, statusBody(503, 'ServiceUnavailable', 'the server is currently unable to handle the request'), null];
    }
    if (path === REVIEW_PATH) {
      const call = { verb: 'create', resource: 'tokenreviews', group: 'authentication.k8s.io' } as const;
      if (req.method !== 'POST') return [405, statusBody(405, 'MethodNotAllowed', 'method not allowed'), call];
      if (!this.#canReview) {
        return [
          403,
          forbiddenStatus(
            MEMORY_SERVER_USER,
            'create',
            { group: call.group, plural: 'tokenreviews' },
            undefined,
            undefined,
          ),
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
    const core = CORE_PATH.exec(path);
    const group = core ? null : GROUP_PATH.exec(path);
    let type: ResourceType | undefined;
    let namespace: string | undefined;
    let name: string | undefined;
    if (core?.[2] === POD.plural) [type, namespace, name] = [POD, core[1], core[3]];
    else if (group) {
      type = CUSTOM_TYPES.find((t) => t.group === group[1] && t.version === group[2] && t.plural === group[4]);
      [namespace, name] = [group[3], group[5]];
    }
    if (!type || !namespace) {
      return [404, statusBody(404, 'NotFound', 'the server could not find the requested resource'), null];
    }
    const verb = req.method !== 'GET' ? 'other' : name ? 'get' : 'list';
    const call = { verb, resource: type.plural, group: type.group, namespace, name } as const;
    const allowed = verb === 'get' && (this.#rbacNamespaces === '*' || this.#rbacNamespaces.includes(namespace));
    if (!allowed) {
      const kubeVerb = verb === 'other' ? (req.method ?? 'other').toLowerCase() : verb;
      return [403, forbiddenStatus(MEMORY_SERVER_USER, kubeVerb, type, namespace, name), call];
    }
    const obj = this.getObject(type, namespace, name!);
    return obj ? [200, obj, call] : [404, notFoundStatus(type, name!), call];
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

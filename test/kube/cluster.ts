/**
 * @module
 * The state behind the API-server double: an object store plus what kube-apiserver and the
 * agent-sandbox controllers would do to it (warm pool, adoption by a claim, cascade delete, same-name
 * recreate) and the TokenReview authenticator for bound service-account tokens. No HTTP here;
 * `test/kube/double.ts` serves it. Tests drive it through the double's methods.
 */
import { randomUUID } from 'node:crypto';
import { POD, type ResourceType, SANDBOX, SANDBOX_CLAIM, SANDBOX_WARM_POOL } from '../../src/kube/agent-sandbox.ts';
import type { TokenReviewStatus } from '../../src/kube/types.ts';
import { ObjectStore } from './object-store.ts';
import {
  claimObject,
  controllerRef,
  generateName,
  podObject,
  sandboxObject,
  type WireObject,
  warmPoolObject,
} from './objects.ts';
import { TokenIssuer } from './tokens.ts';

/** A sandbox pod as the double created it: pod, its Sandbox, and the claim that holds it (if any). */
export interface SandboxPod {
  namespace: string;
  pod: string;
  podUid: string;
  sandbox: string;
  sandboxUid: string;
  serviceAccount: string;
  /** The SandboxClaim name, when claimed. */
  claim?: string;
  claimUid?: string;
}

/** Options for a token. */
export interface IssueTokenOptions {
  /** `aud`; a list for several. @default 'tether' */
  audience?: string | string[];
  /** Lifetime in seconds; zero or negative makes an already expired token. @default 3600 */
  expiresInSeconds?: number;
}

/** Defaults of the fake cluster. */
export interface ClusterOptions {
  /** Sandbox namespace. @default 'agents' */
  namespace?: string;
  /** Sandbox service account. @default 'tether-sandbox' */
  serviceAccount?: string;
  /** The API server's own audiences (used when a review names none). @default ['https://kubernetes.default.svc.cluster.local'] */
  apiAudiences?: string[];
}

const WARM_POOL = 'tether-agents';
const TEMPLATE = 'tether-agent';

/** Objects, controllers and the token authenticator of one fake cluster. */
export class FakeCluster {
  readonly namespace: string;
  readonly serviceAccount: string;
  readonly apiAudiences: string[];
  readonly issuer = new TokenIssuer();
  /** Every object of the cluster; writes here are seen by watches. */
  readonly store = new ObjectStore();
  readonly #saUids = new Map<string, string>();
  #afterReview: (() => void)[] = [];

  constructor(options: ClusterOptions = {}) {
    this.namespace = options.namespace ?? 'agents';
    this.serviceAccount = options.serviceAccount ?? 'tether-sandbox';
    this.apiAudiences = options.apiAudiences ?? ['https://kubernetes.default.svc.cluster.local'];
  }

  /** The stored object, or undefined. */
  getObject(type: ResourceType, namespace: string, name: string): WireObject | undefined {
    return this.store.get(type, namespace, name);
  }

  /** A warm-pool pod: SandboxWarmPool -> Sandbox -> Pod, generated name like `tether-agents-x7k2q`. */
  createWarmPoolPod(options: { namespace?: string; pool?: string; serviceAccount?: string } = {}): SandboxPod {
    const ns = options.namespace ?? this.namespace;
    const poolName = options.pool ?? WARM_POOL;
    let pool = this.getObject(SANDBOX_WARM_POOL, ns, poolName);
    if (!pool) {
      pool = warmPoolObject(ns, poolName, TEMPLATE);
      this.#put(SANDBOX_WARM_POOL, pool);
    }
    const name = this.#freeName(ns, `${poolName}-`);
    return this.#createSandboxPod(ns, name, pool, options.serviceAccount ?? this.serviceAccount);
  }

  /** Claim `claimName` adopts a warm pod: the claim is created and becomes the Sandbox's controller. */
  adoptWarmPod(pod: SandboxPod, claimName: string): SandboxPod {
    const sandbox = this.#mustGet(SANDBOX, pod.namespace, pod.sandbox);
    const pool = sandbox.metadata.ownerReferences?.find((r) => r.controller)?.name ?? WARM_POOL;
    const claim =
      this.getObject(SANDBOX_CLAIM, pod.namespace, claimName) ?? claimObject(pod.namespace, claimName, pool);
    claim.metadata.annotations = {
      ...claim.metadata.annotations,
      'agents.x-k8s.io/sandbox-name': sandbox.metadata.name,
    };
    claim.status = { sandbox: { name: sandbox.metadata.name, podIPs: ['10.244.0.7'] } };
    const stored = this.#put(SANDBOX_CLAIM, claim);
    sandbox.metadata.ownerReferences = [controllerRef(stored)];
    sandbox.metadata.labels = { ...sandbox.metadata.labels, 'agents.x-k8s.io/claim-uid': stored.metadata.uid };
    this.#put(SANDBOX, sandbox);
    return { ...pod, claim: claimName, claimUid: stored.metadata.uid };
  }

  /** A claim with a fresh pod: cold start (Sandbox named after the claim), or via the warm pool. */
  createClaim(
    name: string,
    options: { namespace?: string; serviceAccount?: string; warmPool?: boolean } = {},
  ): SandboxPod {
    const ns = options.namespace ?? this.namespace;
    if (this.getObject(SANDBOX_CLAIM, ns, name)) throw new Error(`sandboxclaim ${ns}/${name} already exists`);
    const sa = options.serviceAccount ?? this.serviceAccount;
    if (options.warmPool) return this.adoptWarmPod(this.createWarmPoolPod({ namespace: ns, serviceAccount: sa }), name);
    const claim = claimObject(ns, name, WARM_POOL);
    this.#put(SANDBOX_CLAIM, claim);
    const sandboxName = this.getObject(SANDBOX, ns, name) ? this.#freeName(ns, `${name}-`) : name;
    const pod = this.#createSandboxPod(ns, sandboxName, claim, sa);
    claim.status = { sandbox: { name: sandboxName, podIPs: ['10.244.0.7'] } };
    this.#put(SANDBOX_CLAIM, claim);
    return { ...pod, claim: name, claimUid: claim.metadata.uid };
  }

  /** Delete a claim; its Sandbox and Pod go too, unless `orphan` (garbage collection has not run yet). */
  deleteClaim(name: string, options: { namespace?: string; orphan?: boolean } = {}): void {
    const ns = options.namespace ?? this.namespace;
    const claim = this.#mustGet(SANDBOX_CLAIM, ns, name);
    this.store.delete(SANDBOX_CLAIM, ns, name);
    if (options.orphan) return;
    for (const sandbox of this.#controlledBy(SANDBOX, claim)) {
      for (const pod of this.#controlledBy(POD, sandbox)) this.store.delete(POD, ns, pod.metadata.name);
      this.store.delete(SANDBOX, ns, sandbox.metadata.name);
    }
  }

  /** Delete a claim and create it again under the same name (new uid, new pod); `keepOldPod` leaves the old one running. */
  recreateClaim(
    name: string,
    options: { namespace?: string; keepOldPod?: boolean; warmPool?: boolean } = {},
  ): SandboxPod {
    this.deleteClaim(name, { namespace: options.namespace, orphan: options.keepOldPod });
    return this.createClaim(name, { namespace: options.namespace, warmPool: options.warmPool });
  }

  /** Mark a claim as being deleted (deletionTimestamp + a finalizer), as during foreground deletion. */
  markClaimDeleting(name: string, namespace = this.namespace): void {
    const claim = this.#mustGet(SANDBOX_CLAIM, namespace, name);
    claim.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    claim.metadata.finalizers = ['foregroundDeletion'];
    this.#put(SANDBOX_CLAIM, claim);
  }

  /** Delete a pod (its tokens stop passing review). */
  deletePod(pod: Pick<SandboxPod, 'namespace' | 'pod'>): void {
    this.store.delete(POD, pod.namespace, pod.pod);
  }

  /** Replace a pod with one of the same name and a new uid (same owner). */
  replacePod(pod: SandboxPod): SandboxPod {
    const sandbox = this.#mustGet(SANDBOX, pod.namespace, pod.sandbox);
    const fresh = podObject(sandbox, pod.serviceAccount);
    this.#put(POD, fresh);
    return { ...pod, podUid: fresh.metadata.uid };
  }

  /** A projected token bound to the pod, as the kubelet would mount it. */
  issueToken(pod: SandboxPod, options: IssueTokenOptions = {}): string {
    return this.issuer.mint(
      {
        namespace: pod.namespace,
        serviceaccount: { name: pod.serviceAccount, uid: this.#saUid(pod.namespace, pod.serviceAccount) },
        pod: { name: pod.pod, uid: pod.podUid },
        node: { name: 'kind-worker', uid: '4c1e6a1e-0000-4000-8000-00000000a0de' },
      },
      audiences(options),
      options.expiresInSeconds ?? 3600,
    );
  }

  /** A service-account token bound to no pod (e.g. from `kubectl create token`). */
  issueUnboundToken(account: { namespace?: string; serviceAccount?: string }, options: IssueTokenOptions = {}): string {
    const ns = account.namespace ?? this.namespace;
    const sa = account.serviceAccount ?? this.serviceAccount;
    return this.issuer.mint(
      { namespace: ns, serviceaccount: { name: sa, uid: this.#saUid(ns, sa) } },
      audiences(options),
      options.expiresInSeconds ?? 3600,
    );
  }

  /** Run `fn` right after the next TokenReview is answered (to stage a race). */
  afterNextReview(fn: () => void): void {
    this.#afterReview.push(fn);
  }

  /** The TokenReview authenticator: status for `spec`, as kube-apiserver computes it. */
  reviewToken(spec: { token?: unknown; audiences?: unknown }): TokenReviewStatus {
    try {
      return this.#review(spec);
    } finally {
      const hooks = this.#afterReview;
      this.#afterReview = [];
      for (const fn of hooks) fn();
    }
  }

  #review(spec: { token?: unknown; audiences?: unknown }): TokenReviewStatus {
    const fail = (why: string): TokenReviewStatus => ({ user: {}, error: `[invalid bearer token, ${why}]` });
    if (typeof spec.token !== 'string' || spec.token === '') return fail('token is empty');
    const verified = this.issuer.verify(spec.token);
    if ('problem' in verified) {
      if (verified.problem === 'expired') return fail('service account token has expired');
      return fail('square/go-jose: error in cryptographic primitive');
    }
    const { payload } = verified;
    const wanted =
      Array.isArray(spec.audiences) && spec.audiences.length > 0 ? (spec.audiences as string[]) : this.apiAudiences;
    const granted = wanted.filter((a) => payload.aud.includes(a));
    if (granted.length === 0) {
      return fail(
        `token audiences ${JSON.stringify(payload.aud)} is invalid for the target audiences ${JSON.stringify(wanted)}`,
      );
    }
    const k = payload['kubernetes.io'];
    const extra: Record<string, string[]> = { 'authentication.kubernetes.io/credential-id': [`JTI=${payload.jti}`] };
    if (k.pod) {
      const pod = this.getObject(POD, k.namespace, k.pod.name);
      if (!pod) return fail(`pod "${k.pod.name}" not found`);
      if (pod.metadata.uid !== k.pod.uid) return fail('Token has been invalidated');
      extra['authentication.kubernetes.io/node-name'] = [k.node?.name ?? 'kind-worker'];
      extra['authentication.kubernetes.io/node-uid'] = [k.node?.uid ?? ''];
      extra['authentication.kubernetes.io/pod-name'] = [k.pod.name];
      extra['authentication.kubernetes.io/pod-uid'] = [k.pod.uid];
    }
    return {
      authenticated: true,
      user: {
        username: payload.sub,
        uid: k.serviceaccount.uid,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${k.namespace}`, 'system:authenticated'],
        extra,
      },
      audiences: granted,
    };
  }

  #createSandboxPod(ns: string, name: string, owner: WireObject, serviceAccount: string): SandboxPod {
    const sandbox = sandboxObject(ns, name, owner, TEMPLATE);
    this.#put(SANDBOX, sandbox);
    const pod = podObject(sandbox, serviceAccount);
    this.#put(POD, pod);
    return {
      namespace: ns,
      pod: name,
      podUid: pod.metadata.uid,
      sandbox: name,
      sandboxUid: sandbox.metadata.uid,
      serviceAccount,
    };
  }

  #freeName(ns: string, prefix: string): string {
    for (;;) {
      const name = generateName(prefix);
      if (!this.getObject(SANDBOX, ns, name) && !this.getObject(POD, ns, name)) return name;
    }
  }

  #controlledBy(type: ResourceType, owner: WireObject): WireObject[] {
    return this.store
      .list(type, { namespace: owner.metadata.namespace })
      .filter((o) => o.metadata.ownerReferences?.some((r) => r.controller && r.uid === owner.metadata.uid));
  }

  #put(type: ResourceType, obj: WireObject): WireObject {
    return this.store.put(type, obj);
  }

  #mustGet(type: ResourceType, ns: string, name: string): WireObject {
    const obj = this.getObject(type, ns, name);
    if (!obj) throw new Error(`${type.plural} ${ns}/${name} does not exist in the double`);
    return obj;
  }

  #saUid(ns: string, sa: string): string {
    let uid = this.#saUids.get(`${ns}/${sa}`);
    if (!uid) {
      uid = randomUUID();
      this.#saUids.set(`${ns}/${sa}`, uid);
    }
    return uid;
  }
}

function audiences(options: IssueTokenOptions): string[] {
  const a = options.audience ?? 'tether';
  return Array.isArray(a) ? a : [a];
}

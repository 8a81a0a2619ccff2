/**
 * @module
 * The local identity authority of `tether up`: with no Kubernetes, the gateway describes its own
 * instances as the objects of a sandbox's owner chain (Pod -> Sandbox -> SandboxClaim, or a
 * SandboxWarmPool while unclaimed) and signs projected-style workload tokens (ES256) for them, so the
 * memory server verifies identity on the one path it uses on a cluster. State lives in memory.
 * Served over HTTP by `api-server.ts`; driven by the gateway's instance and session events.
 */
import { randomUUID } from 'node:crypto';
import { type CryptoKey, generateKeyPair, errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../../common/clock.ts';
import { apiVersionOf, POD, SANDBOX, SANDBOX_CLAIM, SANDBOX_WARM_POOL } from '../../kube/agent-sandbox.ts';
import type { KubeObject, OwnerReference, TokenReviewStatus } from '../../kube/types.ts';
import { ClaimFeed } from './claim-feed.ts';

/** Issuer of local tokens. */
export const LOCAL_ISSUER = 'https://tether.local/authority';

interface Instance {
  namespace: string;
  name: string;
  podUid: string;
  sandboxUid: string;
  warmPool: { name: string; uid: string };
  serviceAccount: string;
  /** Claim name while claimed. */
  claim: string | null;
}

/** Options for `LocalIdentityAuthority.create`. */
export interface LocalAuthorityOptions {
  clock: Clock;
  /** Service account every instance runs as. @default 'tether-sandbox' */
  serviceAccount?: string;
}

/** Identity objects and tokens for local instances. */
export class LocalIdentityAuthority {
  readonly #clock: Clock;
  readonly #serviceAccount: string;
  readonly #privateKey: CryptoKey;
  readonly #publicKey: CryptoKey;
  readonly #instances = new Map<string, Instance>(); // key: ns/name
  readonly #claims = new Map<string, { uid: string; instance: string }>(); // key: ns/claim
  readonly #pools = new Map<string, string>(); // ns/pool -> uid
  /** The claims as a list + watch source (the memory server revokes a deleted claim's keys). */
  readonly claims = new ClaimFeed();

  private constructor(options: LocalAuthorityOptions, keys: { privateKey: CryptoKey; publicKey: CryptoKey }) {
    this.#clock = options.clock;
    this.#serviceAccount = options.serviceAccount ?? 'tether-sandbox';
    this.#privateKey = keys.privateKey;
    this.#publicKey = keys.publicKey;
  }

  /** Makes an authority with a fresh signing key (never written anywhere). */
  static async create(options: LocalAuthorityOptions): Promise<LocalIdentityAuthority> {
    return new LocalIdentityAuthority(options, await generateKeyPair('ES256'));
  }

  /** A started instance: a pod whose sandbox belongs to the service's warm pool until claimed. */
  addInstance(namespace: string, name: string, service: string): void {
    const poolKey = `${namespace}/${service}`;
    let poolUid = this.#pools.get(poolKey);
    if (!poolUid) {
      poolUid = randomUUID();
      this.#pools.set(poolKey, poolUid);
    }
    this.#instances.set(`${namespace}/${name}`, {
      namespace,
      name,
      podUid: randomUUID(),
      sandboxUid: randomUUID(),
      warmPool: { name: service, uid: poolUid },
      serviceAccount: this.#serviceAccount,
      claim: null,
    });
  }

  /** A session took the instance: its sandbox is now owned by claim `claim` (made if new). */
  claimInstance(namespace: string, name: string, claim: string): void {
    const inst = this.#instances.get(`${namespace}/${name}`);
    if (!inst) return;
    const key = `${namespace}/${claim}`;
    const existing = this.#claims.get(key);
    // A claim is one object bound to one sandbox; a new binding of the same name is a new claim.
    if (!existing || existing.instance !== name) {
      if (existing) this.claims.deleted(namespace, claim, existing.uid);
      const uid = randomUUID();
      this.#claims.set(key, { uid, instance: name });
      this.claims.added(object(SANDBOX_CLAIM, namespace, claim, uid, undefined));
    }
    inst.claim = claim;
  }

  /** The instance is gone (deleted or died): its pod, sandbox and claim go with it. */
  removeInstance(namespace: string, name: string): void {
    const inst = this.#instances.get(`${namespace}/${name}`);
    if (!inst) return;
    if (inst.claim) {
      const key = `${namespace}/${inst.claim}`;
      const c = this.#claims.get(key);
      if (c?.instance === name) {
        this.#claims.delete(key);
        this.claims.deleted(namespace, inst.claim, c.uid);
      }
    }
    this.#instances.delete(`${namespace}/${name}`);
  }

  /**
   * A projected-style token for the instance's pod.
   * @param expiresInSeconds token life. @default 3600
   * @throws {Error} for an unknown instance
   */
  async issueToken(namespace: string, name: string, audience: string, expiresInSeconds = 3600): Promise<string> {
    const inst = this.#instances.get(`${namespace}/${name}`);
    if (!inst) throw new Error(`no instance ${namespace}/${name}`);
    const now = Math.floor(this.#clock.now() / 1000);
    return new SignJWT({
      'kubernetes.io': {
        namespace,
        pod: { name, uid: inst.podUid },
        serviceaccount: { name: inst.serviceAccount, uid: `sa-${namespace}-${inst.serviceAccount}` },
      },
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'JWT' })
      .setIssuer(LOCAL_ISSUER)
      .setSubject(`system:serviceaccount:${namespace}:${inst.serviceAccount}`)
      .setAudience(audience)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + expiresInSeconds)
      .sign(this.#privateKey);
  }

  /** What a TokenReview says about `token` for `audiences`, like the API server. */
  async review(token: string, audiences: string[]): Promise<TokenReviewStatus> {
    const fail = (error: string): TokenReviewStatus => ({ authenticated: false, user: {}, error });
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.#publicKey, {
        issuer: LOCAL_ISSUER,
        audience: audiences,
        currentDate: new Date(this.#clock.now()),
      }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) return fail('token has expired');
      if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'aud')
        return fail('token audiences do not match');
      return fail('invalid bearer token');
    }
    const k = payload['kubernetes.io'] as { namespace: string; pod: { name: string; uid: string } } | undefined;
    const inst = k ? this.#instances.get(`${k.namespace}/${k.pod.name}`) : undefined;
    // A bound token dies with its pod: a deleted or replaced pod's token no longer passes review.
    if (!k || !inst || inst.podUid !== k.pod.uid) return fail('pod bound to the token no longer exists');
    const tokenAud = ([] as string[]).concat((payload.aud as string | string[]) ?? []);
    return {
      authenticated: true,
      user: {
        username: payload.sub as string,
        uid: `sa-${k.namespace}-${inst.serviceAccount}`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${k.namespace}`, 'system:authenticated'],
        extra: {
          'authentication.kubernetes.io/pod-name': [k.pod.name],
          'authentication.kubernetes.io/pod-uid': [k.pod.uid],
        },
      },
      audiences: audiences.filter((a) => tokenAud.includes(a)),
    };
  }

  /** The Pod object, or null. */
  pod(namespace: string, name: string): KubeObject | null {
    const inst = this.#instances.get(`${namespace}/${name}`);
    if (!inst) return null;
    return object(POD, namespace, name, inst.podUid, [
      ownerRef(apiVersionOf(SANDBOX), SANDBOX.kind, name, inst.sandboxUid),
    ]);
  }

  /** The Sandbox object (named like its pod), or null. */
  sandbox(namespace: string, name: string): KubeObject | null {
    const inst = this.#instances.get(`${namespace}/${name}`);
    if (!inst) return null;
    const claim = inst.claim ? this.#claims.get(`${namespace}/${inst.claim}`) : undefined;
    const owner =
      inst.claim && claim
        ? ownerRef(apiVersionOf(SANDBOX_CLAIM), SANDBOX_CLAIM.kind, inst.claim, claim.uid)
        : ownerRef(apiVersionOf(SANDBOX_WARM_POOL), SANDBOX_WARM_POOL.kind, inst.warmPool.name, inst.warmPool.uid);
    return object(SANDBOX, namespace, name, inst.sandboxUid, [owner]);
  }

  /** The SandboxClaim object, or null. */
  claim(namespace: string, name: string): KubeObject | null {
    const c = this.#claims.get(`${namespace}/${name}`);
    return c ? object(SANDBOX_CLAIM, namespace, name, c.uid, undefined) : null;
  }
}

function ownerRef(apiVersion: string, kind: string, name: string, uid: string): OwnerReference {
  return { apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true };
}

function object(
  type: typeof POD,
  namespace: string,
  name: string,
  uid: string,
  ownerReferences: OwnerReference[] | undefined,
): KubeObject {
  return {
    apiVersion: apiVersionOf(type),
    kind: type.kind,
    metadata: { name, namespace, uid, ...(ownerReferences ? { ownerReferences } : {}) },
  };
}

/**
 * @module
 * Projected service-account tokens as the API server mints them: JWTs (ES256 here) with iss, aud,
 * exp, iat, nbf, jti, sub and the `kubernetes.io` claims, signed with a key only this issuer knows,
 * so forged or altered tokens fail `verify`. Used by `test/kube/double.ts`; tests may forge with it too.
 */
import { generateKeyPairSync, type KeyObject, randomUUID, sign, verify } from 'node:crypto';

/** The `kubernetes.io` claim of a projected token. */
export interface KubernetesClaims {
  namespace: string;
  serviceaccount: { name: string; uid: string };
  pod?: { name: string; uid: string };
  node?: { name: string; uid: string };
}

/** The payload of a service-account token. */
export interface TokenPayload {
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  iss: string;
  jti: string;
  sub: string;
  'kubernetes.io': KubernetesClaims;
}

/** Why `verify` refused a token. */
export type TokenProblem = 'malformed' | 'signature' | 'expired';

/** Signs and checks service-account tokens with one private key. */
export class TokenIssuer {
  readonly issuer: string;
  readonly #privateKey: KeyObject;
  readonly #publicKey: KeyObject;
  readonly #kid = randomUUID();

  /** @param issuer the `iss` claim @default 'https://kubernetes.default.svc.cluster.local' */
  constructor(issuer = 'https://kubernetes.default.svc.cluster.local') {
    this.issuer = issuer;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.#privateKey = privateKey;
    this.#publicKey = publicKey;
  }

  /** Mint a token for `claims`, valid `expiresInSeconds` from `nowMs` (negative makes an expired token). */
  mint(claims: KubernetesClaims, audiences: string[], expiresInSeconds: number, nowMs = Date.now()): string {
    const iat = Math.floor(nowMs / 1000);
    const payload: TokenPayload = {
      aud: audiences,
      exp: iat + expiresInSeconds,
      iat,
      nbf: iat,
      iss: this.issuer,
      jti: randomUUID(),
      sub: `system:serviceaccount:${claims.namespace}:${claims.serviceaccount.name}`,
      'kubernetes.io': claims,
    };
    return signJwt({ alg: 'ES256', kid: this.#kid }, payload, this.#privateKey);
  }

  /** Check signature and expiry; the payload when good, else the problem. */
  verify(token: string, nowMs = Date.now()): { payload: TokenPayload } | { problem: TokenProblem } {
    const parts = token.split('.');
    if (parts.length !== 3) return { problem: 'malformed' };
    const [h, p, s] = parts as [string, string, string];
    let payload: TokenPayload;
    try {
      const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
      if (header.alg !== 'ES256') return { problem: 'signature' };
      payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
    } catch {
      return { problem: 'malformed' };
    }
    const good = verify(
      'sha256',
      Buffer.from(`${h}.${p}`),
      { key: this.#publicKey, dsaEncoding: 'ieee-p1363' },
      Buffer.from(s, 'base64url'),
    );
    if (!good || payload.iss !== this.issuer) return { problem: 'signature' };
    if (typeof payload.exp !== 'number' || payload.exp * 1000 <= nowMs) return { problem: 'expired' };
    return { payload };
  }
}

/** Sign a JWT with any EC P-256 key (tests use it to forge tokens with a key the double does not know). */
export function signJwt(header: object, payload: object, privateKey: KeyObject): string {
  const h = Buffer.from(JSON.stringify({ typ: 'JWT', ...header })).toString('base64url');
  const p = Buffer.from(JSON.stringify(payload)).toString('base64url');
  const s = sign('sha256', Buffer.from(`${h}.${p}`), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${h}.${p}.${s.toString('base64url')}`;
}

/** Decode a JWT payload without checking it (tests). */
export function decodeJwtPayload(token: string): TokenPayload {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
}

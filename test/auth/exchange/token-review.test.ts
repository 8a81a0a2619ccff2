/**
 * Table tests of the pure TokenReview status checks and of reading `exp` from a token.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tokenExpiresAt } from '../../../src/auth/exchange/token-expiry.ts';
import { checkTokenReview, type ReviewPolicy } from '../../../src/auth/exchange/token-review.ts';
import { TetherError } from '../../../src/common/errors.ts';
import type { TokenReviewStatus } from '../../../src/kube/types.ts';

const good: TokenReviewStatus = {
  authenticated: true,
  user: {
    username: 'system:serviceaccount:agents:tether-sandbox',
    uid: 'sa-uid',
    groups: ['system:serviceaccounts', 'system:serviceaccounts:agents', 'system:authenticated'],
    extra: {
      'authentication.kubernetes.io/pod-name': ['tether-agents-x7k2q'],
      'authentication.kubernetes.io/pod-uid': ['pod-uid'],
    },
  },
  audiences: ['tether'],
};
const policy: ReviewPolicy = { audience: 'tether' };
const withExtra = (extra: Record<string, string[]>): TokenReviewStatus => ({ ...good, user: { ...good.user, extra } });

function refuses(status: TokenReviewStatus, pattern: RegExp, p: ReviewPolicy = policy): void {
  assert.throws(
    () => checkTokenReview(status, p),
    (err: unknown) => err instanceof TetherError && err.code === 'unauthenticated' && pattern.test(err.message),
  );
}

describe('checkTokenReview()', () => {
  it('returns namespace, service account and bound pod of a good review', () => {
    assert.deepEqual(checkTokenReview(good, policy), {
      namespace: 'agents',
      serviceAccount: 'tether-sandbox',
      podName: 'tether-agents-x7k2q',
      podUid: 'pod-uid',
    });
  });

  const cases: [string, TokenReviewStatus, RegExp, ReviewPolicy?][] = [
    ['an unauthenticated review', { user: {}, error: '[invalid bearer token]' }, /not authenticated/],
    ['authenticated: false', { ...good, authenticated: false }, /not authenticated/],
    [
      'a review that does not echo audiences',
      { ...good, audiences: undefined },
      /did not confirm the token's audience 'tether'/,
    ],
    ['a review echoing another audience', { ...good, audiences: ['https://kubernetes.default.svc'] }, /audience/],
    ['a plain user', { ...good, user: { ...good.user, username: 'alice' } }, /not belong to a service account/],
    [
      'a malformed service-account name',
      { ...good, user: { ...good.user, username: 'system:serviceaccount:agents' } },
      /service account/,
    ],
    ['a token without pod extras', withExtra({}), /not bound to a pod/],
    ['a token without pod-uid', withExtra({ 'authentication.kubernetes.io/pod-name': ['p'] }), /not bound to a pod/],
    [
      'two pod names',
      withExtra({ 'authentication.kubernetes.io/pod-name': ['a', 'b'], 'authentication.kubernetes.io/pod-uid': ['u'] }),
      /not bound/,
    ],
    [
      'a namespace off the allow-list',
      good,
      /namespace 'agents' is not allowed/,
      { audience: 'tether', allowedNamespaces: ['other'] },
    ],
    [
      'a service account off the allow-list',
      good,
      /service account 'agents\/tether-sandbox' is not allowed/,
      { audience: 'tether', allowedServiceAccounts: ['other/tether-sandbox', 'builder'] },
    ],
  ];
  for (const [name, status, pattern, p] of cases) it(`refuses ${name}`, () => refuses(status, pattern, p));

  it('accepts allow-list entries as ns/name or bare name', () => {
    for (const entry of ['agents/tether-sandbox', 'tether-sandbox']) {
      const p = { audience: 'tether', allowedNamespaces: ['agents'], allowedServiceAccounts: [entry] };
      assert.equal(checkTokenReview(good, p).serviceAccount, 'tether-sandbox');
    }
  });
});

describe('tokenExpiresAt()', () => {
  const jwt = (payload: object) => `e30.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.sig`;
  it('reads exp in seconds as epoch ms', () =>
    assert.equal(tokenExpiresAt(jwt({ exp: 1_800_000_000 })), 1_800_000_000_000));
  it('is null for a token without exp', () => assert.equal(tokenExpiresAt(jwt({ sub: 'x' })), null));
  it('is null for a non-numeric exp', () => assert.equal(tokenExpiresAt(jwt({ exp: '1800000000' })), null));
  it('is null for an opaque token', () => assert.equal(tokenExpiresAt('not-a-jwt'), null));
  it('is null for a broken payload', () => assert.equal(tokenExpiresAt('a.!!!.c'), null));
});

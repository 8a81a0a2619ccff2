/**
 * The Kubernetes exchanger end to end through the real @kubernetes/client-node against the HTTPS
 * API-server double: TokenReview, owner chain, refusals, outages, timeouts, RBAC.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { createKubernetesExchanger } from '../../../src/auth/exchange/kubernetes-exchanger.ts';
import type { KubernetesExchangerOptions, WorkloadExchanger } from '../../../src/auth/exchange/types.ts';
import { TetherError } from '../../../src/common/errors.ts';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../../../src/kube/client.ts';
import { type KubeDouble, startKubeDouble } from '../../kube/double.ts';
import { decodeJwtPayload, signJwt } from '../../kube/tokens.ts';

let kube: KubeDouble;
let exchanger: WorkloadExchanger;
let seq = 0;
const claimName = () => `job-${++seq}`;
// The longest timeout allowed: the double answers at once, so a call is late only on a loaded machine (the
// timeout's own test sets a short one).
const make = (extra: Partial<KubernetesExchangerOptions> = {}) =>
  createKubernetesExchanger({
    audience: 'tether',
    kubeconfig: kube.kubeconfigPath,
    requestTimeoutMs: 10_000,
    ...extra,
  });

/** Assert `exchange(token)` fails with `code` and a message matching `pattern` that never echoes the token. */
async function refused(
  token: string,
  code: string,
  pattern: RegExp,
  ex: WorkloadExchanger = exchanger,
): Promise<TetherError> {
  const err = await ex.exchange(token).then(
    () => assert.fail('exchange should have failed'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof TetherError, `not a TetherError: ${String(err)}`);
  assert.equal(err.code, code, err.message);
  assert.match(err.message, pattern);
  assert.ok(!token || !err.message.includes(token), 'the message echoes the token');
  return err;
}

before(async () => {
  kube = await startKubeDouble();
  exchanger = make();
});
after(() => kube.close());

describe('KubernetesExchanger.exchange()', () => {
  describe('with a claimed sandbox', () => {
    it('refuses a warm-pool pod with warm_pool, then names the claim once it adopts that pod', async () => {
      const warm = kube.createWarmPoolPod();
      assert.match(warm.pod, /^tether-agents-[a-z0-9]{5}$/);
      const token = kube.issueToken(warm, { audience: 'tether' });
      const err = await refused(token, 'warm_pool', /^still in warm pool$/);
      assert.equal(err.status, 401);

      const claimed = kube.adoptWarmPod(warm, 'run-1');
      kube.resetCalls();
      const who = await exchanger.exchange(token);
      assert.deepEqual(who, {
        tenant: 'agents',
        agent: 'run-1',
        claimUid: claimed.claimUid,
        session: warm.pod,
        podUid: warm.podUid,
        serviceAccount: 'tether-sandbox',
        tokenExpiresAt: decodeJwtPayload(token).exp * 1000,
      });
      assert.equal(claimed.claim, 'run-1');
      assert.deepEqual(
        kube.calls.map((c) => `${c.verb} ${c.resource} ${c.status}`),
        ['create tokenreviews 201', 'get pods 200', 'get sandboxes 200', 'get sandboxclaims 200'],
      );
    });

    it('names a cold-started claim and reads tokenExpiresAt from the token exp', async () => {
      const name = claimName();
      const pod = kube.createClaim(name);
      const before = Date.now();
      const who = await exchanger.exchange(kube.issueToken(pod, { expiresInSeconds: 600 }));
      assert.equal(who.agent, name);
      assert.equal(who.session, pod.pod);
      assert.ok(who.tokenExpiresAt !== null);
      assert.ok(Math.abs(who.tokenExpiresAt - (before + 600_000)) < 2000, `${who.tokenExpiresAt}`);
    });

    it('accepts a token read from a file with a trailing newline', async () => {
      const pod = kube.createClaim(claimName());
      assert.equal((await exchanger.exchange(`${kube.issueToken(pod)}\n`)).session, pod.pod);
    });

    it('accepts a token with several audiences when one is ours', async () => {
      const pod = kube.createClaim(claimName(), { warmPool: true });
      const who = await exchanger.exchange(
        kube.issueToken(pod, { audience: ['https://kubernetes.default.svc', 'tether'] }),
      );
      assert.equal(who.podUid, pod.podUid);
    });
  });

  describe('refuses with unauthenticated', () => {
    it('a token minted for another audience', async () => {
      const pod = kube.createClaim(claimName());
      await refused(
        kube.issueToken(pod, { audience: 'https://kubernetes.default.svc.cluster.local' }),
        'unauthenticated',
        /not authenticated/,
      );
    });

    it('a token signed with another key, and a token whose payload was altered', async () => {
      const pod = kube.createClaim(claimName());
      const real = kube.issueToken(pod);
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const forged = signJwt({ alg: 'ES256' }, decodeJwtPayload(real), privateKey);
      await refused(forged, 'unauthenticated', /not authenticated/);
      const other = kube.createClaim(claimName());
      const payload = {
        ...decodeJwtPayload(real),
        'kubernetes.io': { ...decodeJwtPayload(real)['kubernetes.io'], pod: { name: other.pod, uid: other.podUid } },
      };
      const [h, , s] = real.split('.');
      await refused(
        `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`,
        'unauthenticated',
        /not authenticated/,
      );
      await refused('not-even-a-jwt', 'unauthenticated', /not authenticated/);
    });

    it('an expired token', async () => {
      const pod = kube.createClaim(claimName());
      await refused(kube.issueToken(pod, { expiresInSeconds: -60 }), 'unauthenticated', /not authenticated/);
    });

    it('the token of a pod whose claim was deleted, and of a deleted pod', async () => {
      const name = claimName();
      const pod = kube.createClaim(name);
      const token = kube.issueToken(pod);
      await exchanger.exchange(token);
      kube.deleteClaim(name);
      await refused(token, 'unauthenticated', /not authenticated/);

      const other = kube.createClaim(claimName());
      const otherToken = kube.issueToken(other);
      kube.deletePod(other);
      await refused(otherToken, 'unauthenticated', /not authenticated/);
    });

    it('a token not bound to a pod', async () => {
      await refused(kube.issueUnboundToken({}), 'unauthenticated', /not bound to a pod/);
    });

    it('a pod replaced under the same name between review and get (pod uid mismatch)', async () => {
      const pod = kube.createClaim(claimName());
      kube.afterNextReview(() => kube.replacePod(pod));
      await refused(kube.issueToken(pod), 'unauthenticated', /uid does not match the token's pod-uid/);
    });

    it('the old pod of a claim name deleted and created again, while the new pod gets the name', async () => {
      const name = claimName();
      const old = kube.createClaim(name, { warmPool: true });
      const oldToken = kube.issueToken(old);
      const fresh = kube.recreateClaim(name, { keepOldPod: true, warmPool: true });
      assert.notEqual(fresh.claimUid, old.claimUid);
      await refused(oldToken, 'unauthenticated', new RegExp(`sandboxclaim agents/${name} uid does not match`));
      const who = await exchanger.exchange(kube.issueToken(fresh));
      assert.equal(who.agent, name);
      assert.equal(who.session, fresh.pod);
    });

    it('a claim being deleted', async () => {
      const name = claimName();
      const pod = kube.createClaim(name);
      kube.markClaimDeleting(name);
      await refused(kube.issueToken(pod), 'unauthenticated', /being deleted/);
    });

    it('namespaces and service accounts off the allow-lists', async () => {
      const teamB = kube.createClaim(claimName(), { namespace: 'team-b' });
      const robot = kube.createClaim(claimName(), { serviceAccount: 'robot' });
      const ex = make({ allowedNamespaces: ['agents'], allowedServiceAccounts: ['agents/tether-sandbox', 'builder'] });
      await refused(kube.issueToken(teamB), 'unauthenticated', /namespace 'team-b' is not allowed/, ex);
      await refused(kube.issueToken(robot), 'unauthenticated', /service account 'agents\/robot' is not allowed/, ex);
      const ok = kube.createClaim(claimName());
      assert.equal((await ex.exchange(kube.issueToken(ok))).tenant, 'agents');
      assert.equal((await exchanger.exchange(kube.issueToken(teamB))).tenant, 'team-b');
    });

    it('an empty token, without calling the API server', async () => {
      kube.resetCalls();
      await refused('', 'unauthenticated', /no workload token/);
      assert.equal(kube.countCalls(), 0);
    });
  });

  describe('answers unavailable with retryAfter', () => {
    it('when the API server refuses connections, and recovers when it is back', async () => {
      const pod = kube.createClaim(claimName());
      const token = kube.issueToken(pod);
      await kube.goDown('refuse');
      try {
        const err = await refused(token, 'unavailable', /unreachable/);
        assert.equal(err.status, 503);
        assert.ok((err.retryAfter ?? 0) > 0);
      } finally {
        await kube.goUp();
      }
      assert.equal((await exchanger.exchange(token)).session, pod.pod);
    });

    it('when the API server answers 5xx', async () => {
      const pod = kube.createClaim(claimName());
      await kube.goDown('error');
      try {
        const err = await refused(kube.issueToken(pod), 'unavailable', /answered 503/);
        assert.ok((err.retryAfter ?? 0) > 0);
      } finally {
        await kube.goUp();
      }
    });

    it('when the API server is slower than requestTimeoutMs', async () => {
      const pod = kube.createClaim(claimName());
      const ex = make({ requestTimeoutMs: 150 });
      kube.setLatency(Number.POSITIVE_INFINITY);
      const started = Date.now();
      try {
        const err = await refused(kube.issueToken(pod), 'unavailable', /did not answer in time/, ex);
        assert.ok((err.retryAfter ?? 0) > 0);
      } finally {
        kube.setLatency(0);
      }
      // Sooner than the default timeout: the 150 ms given is the one in force (a margin for a loaded machine).
      assert.ok(Date.now() - started < DEFAULT_REQUEST_TIMEOUT_MS, `took ${Date.now() - started} ms`);
    });

    it('when RBAC forbids a get (403), and logs it for the operator', async () => {
      const pod = kube.createClaim(claimName(), { namespace: 'team-c' });
      const warnings: string[] = [];
      const ex = make({ log: { warn: (_obj, msg) => warnings.push(msg) } });
      kube.setRbac({ namespaces: ['agents'] });
      try {
        await refused(kube.issueToken(pod), 'unavailable', /may not get pods \(RBAC\)/, ex);
      } finally {
        kube.setRbac({ namespaces: '*' });
      }
      assert.equal(warnings.length, 1);
      assert.match(warnings[0] ?? '', /403/);
    });

    it('when RBAC forbids create tokenreviews', async () => {
      const pod = kube.createClaim(claimName());
      kube.setRbac({ canReviewTokens: false });
      try {
        await refused(kube.issueToken(pod), 'unavailable', /may not create tokenreviews/);
      } finally {
        kube.setRbac({ canReviewTokens: true });
      }
    });

    it('when the API server refuses our own credentials (401)', async () => {
      const path = `${kube.kubeconfigPath}.bad-token`;
      await writeFile(path, kube.kubeconfig({ token: 'wrong-token' }));
      const pod = kube.createClaim(claimName());
      await refused(
        kube.issueToken(pod),
        'unavailable',
        /refused the memory server credentials/,
        make({ kubeconfig: path }),
      );
    });

    it('when the server certificate is not trusted, unless skipTlsVerify', async () => {
      const path = `${kube.kubeconfigPath}.no-ca`;
      await writeFile(path, kube.kubeconfig({ withCa: false }));
      const pod = kube.createClaim(claimName());
      const token = kube.issueToken(pod);
      await refused(token, 'unavailable', /unreachable/, make({ kubeconfig: path }));
      assert.equal((await make({ kubeconfig: path, skipTlsVerify: true }).exchange(token)).session, pod.pod);
    });
  });
});

describe('createKubernetesExchanger()', () => {
  it('refuses bad options up front, showing the value', () => {
    assert.throws(() => make({ audience: '' }), /'audience' must be a non-empty string: got ""/);
    assert.throws(
      () => make({ requestTimeoutMs: 20_000 }),
      /'requestTimeoutMs' must be an integer in 1..10000: got 20000/,
    );
    assert.throws(() => make({ allowedNamespaces: [''] }), /'allowedNamespaces' must be a list of non-empty strings/);
    assert.throws(() => make({ kubeconfig: '/nonexistent/kubeconfig' }), /ENOENT/);
  });

  it('refuses to start with no kubeconfig, no KUBECONFIG and not in a cluster', () => {
    const saved = { KUBECONFIG: process.env.KUBECONFIG, KUBERNETES_SERVICE_HOST: process.env.KUBERNETES_SERVICE_HOST };
    delete process.env.KUBECONFIG;
    delete process.env.KUBERNETES_SERVICE_HOST;
    try {
      assert.throws(() => createKubernetesExchanger({ audience: 'tether' }), /no Kubernetes configuration/);
    } finally {
      for (const [k, v] of Object.entries(saved)) if (v !== undefined) process.env[k] = v;
    }
  });

  it('reads the kubeconfig named by KUBECONFIG', async () => {
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = kube.kubeconfigPath;
    try {
      const ex = createKubernetesExchanger({ audience: 'tether' });
      const pod = kube.createClaim(claimName());
      assert.equal((await ex.exchange(kube.issueToken(pod))).agent, pod.claim);
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  });
});

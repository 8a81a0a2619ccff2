/**
 * The API-server double speaks the wire format: raw HTTPS requests (trusting its CA) see real
 * TokenReview, object and Status shapes, bearer auth, RBAC refusals, and agent-sandbox owner references.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { type KubeDouble, startKubeDouble } from './double.ts';

let kube: KubeDouble;

type Json = any;

function call(
  method: string,
  path: string,
  body?: unknown,
  token = kube.bearerToken,
): Promise<{ status: number; json: Json }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${kube.url}${path}`,
      { method, ca: kube.caPem, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

before(async () => {
  kube = await startKubeDouble();
});
after(() => kube.close());

describe('KubeDouble', () => {
  it('answers a TokenReview for a bound token as kube-apiserver does', async () => {
    const pod = kube.adoptWarmPod(kube.createWarmPoolPod(), 'run-1');
    const token = kube.issueToken(pod);
    const review = {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token, audiences: ['tether'] },
    };
    const { status, json } = await call('POST', '/apis/authentication.k8s.io/v1/tokenreviews', review);
    assert.equal(status, 201);
    assert.equal(json.kind, 'TokenReview');
    assert.equal(json.status.authenticated, true);
    assert.deepEqual(json.status.audiences, ['tether']);
    assert.equal(json.status.user.username, 'system:serviceaccount:agents:tether-sandbox');
    assert.deepEqual(json.status.user.groups, [
      'system:serviceaccounts',
      'system:serviceaccounts:agents',
      'system:authenticated',
    ]);
    assert.deepEqual(json.status.user.extra['authentication.kubernetes.io/pod-name'], [pod.pod]);
    assert.deepEqual(json.status.user.extra['authentication.kubernetes.io/pod-uid'], [pod.podUid]);
  });

  it('reviews a foreign-audience token as unauthenticated with an error', async () => {
    const pod = kube.createClaim('aud-1');
    const spec = { token: kube.issueToken(pod, { audience: 'other' }), audiences: ['tether'] };
    const { json } = await call('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { spec });
    assert.equal(json.status.authenticated, undefined);
    assert.match(json.status.error, /invalid bearer token, token audiences \["other"\] is invalid/);
  });

  it('serves Pod -> Sandbox -> SandboxClaim with controller owner references as agent-sandbox writes them', async () => {
    const pod = kube.createClaim('chain-1', { warmPool: true });
    const p = await call('GET', `/api/v1/namespaces/agents/pods/${pod.pod}`);
    const s = await call('GET', `/apis/agents.x-k8s.io/v1beta1/namespaces/agents/sandboxes/${pod.sandbox}`);
    const c = await call('GET', '/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/agents/sandboxclaims/chain-1');
    assert.deepEqual(p.json.metadata.ownerReferences, [
      {
        apiVersion: 'agents.x-k8s.io/v1beta1',
        kind: 'Sandbox',
        name: pod.sandbox,
        uid: s.json.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.deepEqual(s.json.metadata.ownerReferences, [
      {
        apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
        kind: 'SandboxClaim',
        name: 'chain-1',
        uid: c.json.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.equal(c.json.spec.warmPoolRef.name, 'tether-agents');
  });

  it('answers 404 with a NotFound Status', async () => {
    const { status, json } = await call(
      'GET',
      '/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/agents/sandboxclaims/nope',
    );
    assert.equal(status, 404);
    assert.deepEqual(json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'sandboxclaims.extensions.agents.x-k8s.io "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', group: 'extensions.agents.x-k8s.io', kind: 'sandboxclaims' },
      code: 404,
    });
  });

  it('refuses list (not granted) and gets outside the RBAC namespaces with a Forbidden Status', async () => {
    const list = await call('GET', '/api/v1/namespaces/agents/pods');
    assert.equal(list.status, 403);
    assert.equal(list.json.reason, 'Forbidden');
    assert.match(list.json.message, /cannot list resource "pods" in API group "" in the namespace "agents"/);
    kube.setRbac({ namespaces: ['agents'] });
    try {
      const other = await call('GET', '/api/v1/namespaces/kube-system/pods/x');
      assert.equal(other.status, 403);
      assert.equal(other.json.code, 403);
    } finally {
      kube.setRbac({ namespaces: '*' });
    }
  });

  it('answers 401 without its bearer token and does not count the call', async () => {
    kube.resetCalls();
    const { status, json } = await call('GET', '/api/v1/namespaces/agents/pods/x', undefined, 'wrong');
    assert.equal(status, 401);
    assert.equal(json.reason, 'Unauthorized');
    assert.equal(kube.countCalls(), 0);
    await call('GET', '/api/v1/namespaces/agents/pods/x');
    assert.equal(kube.countCalls({ verb: 'get', resource: 'pods', status: 404 }), 1);
  });

  it('deletes a claim with its sandbox and pod, and its tokens stop passing review', async () => {
    const pod = kube.createClaim('gone-1');
    const token = kube.issueToken(pod);
    kube.deleteClaim('gone-1');
    assert.equal((await call('GET', `/api/v1/namespaces/agents/pods/${pod.pod}`)).status, 404);
    assert.equal(
      (await call('GET', `/apis/agents.x-k8s.io/v1beta1/namespaces/agents/sandboxes/${pod.sandbox}`)).status,
      404,
    );
    const { json } = await call('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      spec: { token, audiences: ['tether'] },
    });
    assert.match(json.status.error, /not found/);
  });

  it('removes its temp files on close, and close twice is safe', async () => {
    const other = await startKubeDouble();
    assert.ok(existsSync(other.kubeconfigPath));
    await other.close();
    await other.close();
    assert.ok(!existsSync(other.kubeconfigPath));
  });
});

/**
 * The double's object endpoints speak the API server's wire format: create/get/list/delete, merge and JSON
 * patch (strategic merge patch refused with 415 for custom resources, accepted for pods), watch from a
 * resourceVersion with 410 Gone for a too-old one, Status errors, and each user's Role.
 */
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { type KubeDouble, startKubeDouble } from './double.ts';
import { applyPatch, PATCH_TYPES } from './patch.ts';

let kube: KubeDouble;
type Json = any;

const CLAIMS = '/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/agents/sandboxclaims';

function call(
  method: string,
  path: string,
  body?: unknown,
  options: { token?: string; type?: string } = {},
): Promise<{ status: number; json: Json }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${kube.url}${path}`,
      {
        method,
        ca: kube.caPem,
        headers: {
          authorization: `Bearer ${options.token ?? kube.gatewayToken}`,
          'content-type': options.type ?? 'application/json',
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body));
  });
}

/** Opens a watch and collects its events until `count` arrived (or the stream ended); `onOpen` once it is open. */
function watchEvents(path: string, count: number, onOpen?: () => void): Promise<{ type: string; object: Json }[]> {
  return new Promise((resolve, reject) => {
    const events: { type: string; object: Json }[] = [];
    const req = request(
      `${kube.url}${path}`,
      { ca: kube.caPem, headers: { authorization: `Bearer ${kube.gatewayToken}` } },
      (res) => {
        onOpen?.();
        let buf = '';
        res.on('data', (c) => {
          buf += c;
          let nl = buf.indexOf('\n');
          while (nl >= 0) {
            events.push(JSON.parse(buf.slice(0, nl)));
            buf = buf.slice(nl + 1);
            nl = buf.indexOf('\n');
          }
          if (events.length >= count) {
            req.destroy();
            resolve(events);
          }
        });
        res.on('end', () => resolve(events));
      },
    );
    req.on('error', (err) => (events.length >= count ? resolve(events) : reject(err)));
    req.end();
  });
}

const claim = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
  kind: 'SandboxClaim',
  metadata: { name, labels },
  spec: { warmPoolRef: { name: 'pool' } },
  status: { ignored: true },
});

before(async () => {
  kube = await startKubeDouble();
});
after(() => kube.close());

describe('KubeDouble objects', () => {
  it('creates (201, status dropped), refuses a duplicate with 409 AlreadyExists, gets and lists by label', async () => {
    const made = await call('POST', CLAIMS, claim('c-1', { app: 'a' }));
    assert.equal(made.status, 201);
    assert.match(made.json.metadata.uid, /^[0-9a-f-]{36}$/);
    assert.equal(made.json.metadata.generation, 1);
    assert.equal(made.json.status, undefined);
    const again = await call('POST', CLAIMS, claim('c-1'));
    assert.equal(again.status, 409);
    assert.equal(again.json.reason, 'AlreadyExists');
    await call('POST', CLAIMS, claim('c-2', { app: 'b' }));
    const list = await call('GET', `${CLAIMS}?labelSelector=${encodeURIComponent('app=a')}`);
    assert.equal(list.json.kind, 'SandboxClaimList');
    assert.deepEqual(
      list.json.items.map((i: Json) => i.metadata.name),
      ['c-1'],
    );
    assert.ok(Number(list.json.metadata.resourceVersion) >= Number(made.json.metadata.resourceVersion));
  });

  it('applies merge and JSON patches, bumps generation on spec changes, and refuses strategic merge with 415', async () => {
    await call('POST', CLAIMS, claim('p-1'));
    const merged = await call(
      'PATCH',
      `${CLAIMS}/p-1`,
      { metadata: { labels: { x: 'y' } }, spec: { lifecycle: { shutdownPolicy: 'Delete' } } },
      { type: 'application/merge-patch+json' },
    );
    assert.equal(merged.status, 200);
    assert.equal(merged.json.metadata.labels.x, 'y');
    assert.equal(merged.json.spec.warmPoolRef.name, 'pool');
    assert.equal(merged.json.metadata.generation, 2);
    const patched = await call(
      'PATCH',
      `${CLAIMS}/p-1`,
      [{ op: 'replace', path: '/spec/warmPoolRef/name', value: 'q' }],
      {
        type: 'application/json-patch+json',
      },
    );
    assert.equal(patched.json.spec.warmPoolRef.name, 'q');
    const failedTest = await call(
      'PATCH',
      `${CLAIMS}/p-1`,
      [{ op: 'test', path: '/spec/warmPoolRef/name', value: 'no' }],
      {
        type: 'application/json-patch+json',
      },
    );
    assert.equal(failedTest.status, 422);
    const smp = await call('PATCH', `${CLAIMS}/p-1`, { spec: {} }, { type: 'application/strategic-merge-patch+json' });
    assert.equal(smp.status, 415);
    assert.equal(smp.json.reason, 'UnsupportedMediaType');
    const stale = await call(
      'PATCH',
      `${CLAIMS}/p-1`,
      { metadata: { resourceVersion: '1' } },
      {
        type: 'application/merge-patch+json',
      },
    );
    assert.equal(stale.status, 409);
    assert.equal(stale.json.reason, 'Conflict');
  });

  it('accepts a strategic merge patch on a core Pod (neither Role may patch pods, so applied directly)', () => {
    const pod = { metadata: { name: 'p', labels: { a: '1' } } };
    const out = applyPatch(pod, PATCH_TYPES.strategic, JSON.stringify({ metadata: { labels: { b: '2' } } }), false);
    assert.deepEqual(out, { ok: true, doc: { metadata: { name: 'p', labels: { a: '1', b: '2' } } } });
    assert.equal(applyPatch(pod, PATCH_TYPES.strategic, '{}', true).ok, false);
  });

  it('deletes a custom resource with a Success Status and answers 404 NotFound after', async () => {
    const made = await call('POST', CLAIMS, claim('d-1'));
    const del = await call('DELETE', `${CLAIMS}/d-1`);
    assert.equal(del.status, 200);
    assert.equal(del.json.status, 'Success');
    assert.equal(del.json.details.uid, made.json.metadata.uid);
    const gone = await call('GET', `${CLAIMS}/d-1`);
    assert.equal(gone.status, 404);
    assert.equal(gone.json.reason, 'NotFound');
  });

  it('watches from a resourceVersion: the changes after it, in order', async () => {
    const made = await call('POST', CLAIMS, claim('w-1'));
    await call(
      'PATCH',
      `${CLAIMS}/w-1`,
      { metadata: { labels: { n: '1' } } },
      { type: 'application/merge-patch+json' },
    );
    await call('DELETE', `${CLAIMS}/w-1`);
    const events = await watchEvents(
      `${CLAIMS}?watch=true&resourceVersion=${made.json.metadata.resourceVersion}&fieldSelector=metadata.name%3Dw-1`,
      2,
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['MODIFIED', 'DELETED'],
    );
    assert.equal(events[1]!.object.metadata.uid, made.json.metadata.uid);
  });

  it('streams live events to an open watch', async () => {
    const list = await call('GET', CLAIMS);
    const path = `${CLAIMS}?watch=true&resourceVersion=${list.json.metadata.resourceVersion}`;
    const [e] = await watchEvents(path, 1, () => void call('POST', CLAIMS, claim('live-1')));
    assert.equal(e!.type, 'ADDED');
    assert.equal(e!.object.metadata.name, 'live-1');
  });

  it('answers a too-old resourceVersion with an ERROR event carrying a 410 Expired Status', async () => {
    const list = await call('GET', CLAIMS);
    await call('POST', CLAIMS, claim('old-1'));
    kube.store.compact();
    const [e] = await watchEvents(`${CLAIMS}?watch=true&resourceVersion=${list.json.metadata.resourceVersion}`, 1);
    assert.equal(e!.type, 'ERROR');
    assert.equal(e!.object.code, 410);
    assert.equal(e!.object.reason, 'Expired');
  });

  it('enforces each Role: the memory server may watch claims but not create them', async () => {
    const watchOk = await call('GET', `${CLAIMS}?limit=1`, undefined, { token: kube.bearerToken });
    assert.equal(watchOk.status, 200);
    const create = await call('POST', CLAIMS, claim('mem-1'), { token: kube.bearerToken });
    assert.equal(create.status, 403);
    assert.match(create.json.message, /cannot create resource "sandboxclaims"/);
  });
});

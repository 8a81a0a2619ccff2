import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { type AuthorityApiServer, startAuthorityApi } from '../../../src/auth/local-authority/api-server.ts';
import { LocalIdentityAuthority } from '../../../src/auth/local-authority/authority.ts';
import { ManualClock } from '../../../src/common/clock.ts';
import { fuzzCases, sendRaw } from '../../helpers/fuzz.ts';

let api: AuthorityApiServer;
let dir: string;
let bearer: string;
let port: number;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tether-authority-api-'));
  const authority = await LocalIdentityAuthority.create({ clock: new ManualClock(Date.now()) });
  authority.addInstance('default', 'svc-a1b2c', 'svc');
  api = await startAuthorityApi(authority, { kubeconfigPath: join(dir, 'kubeconfig') });
  bearer = parse(readFileSync(api.kubeconfigPath, 'utf8')).users[0].user.token;
  port = Number(new URL(api.url).port);
});
after(async () => {
  await api.close();
  rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: string) {
  const r = await fetch(`${api.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(60_000), // only stops a hang: a loaded machine is slow, not wrong
  });
  return {
    status: r.status,
    body: (await r.json()) as { kind: string; code: number; reason: string; message: string },
  };
}

describe('the local authority API refuses bad input with a Status 400 and keeps serving', () => {
  it('answers a malformed percent-escape in a pod name with 400, not an uncaught URIError', async () => {
    const r = await call('GET', '/api/v1/namespaces/default/pods/%E0%A4%A');
    assert.equal(r.status, 400);
    assert.deepEqual([r.body.kind, r.body.reason, r.body.code], ['Status', 'BadRequest', 400]);
    assert.match(r.body.message, /percent-encoding/);
  });

  for (const [name, body] of [
    ['null', 'null'],
    ['a list', '[]'],
    ['a string spec', '{"spec":"x"}'],
    ['a numeric token', '{"spec":{"token":5}}'],
    ['audiences not strings', '{"spec":{"token":"t","audiences":[1]}}'],
    ['not JSON', '{"spec":'],
  ] as const) {
    it(`answers a TokenReview whose body is ${name} with 400`, async () => {
      const r = await call('POST', '/apis/authentication.k8s.io/v1/tokenreviews', body);
      assert.equal(r.status, 400);
      assert.deepEqual([r.body.kind, r.body.reason], ['Status', 'BadRequest']);
    });
  }

  it('answers a body over 64 KiB with 413', async () => {
    const r = await call(
      'POST',
      '/apis/authentication.k8s.io/v1/tokenreviews',
      `{"spec":{"token":"${'a'.repeat(70_000)}"}}`,
    );
    assert.equal(r.status, 413);
  });

  it('still answers a good lookup after all of that', async () => {
    const r = await call('GET', '/api/v1/namespaces/default/pods/svc-a1b2c');
    assert.equal(r.status, 200);
    assert.equal(r.body.kind, 'Pod');
  });
});

describe('fuzz: the local authority API under random requests', () => {
  it('answers 600 seeded random requests with no 5xx and stays up', async () => {
    const seed = 9007;
    const cases = fuzzCases(seed, 600, {
      paths: [
        '/apis/authentication.k8s.io/v1/tokenreviews',
        '/api/v1/namespaces/{x}/pods/{x}',
        '/apis/agents.x-k8s.io/v1beta1/namespaces/{x}/sandboxes/{x}',
        '/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/{x}/sandboxclaims/{x}',
        '/{x}',
      ],
      goodHeaders: { authorization: `Bearer ${bearer}` },
      bodies: [
        {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          spec: { token: 'x.y.z', audiences: ['tether'] },
        },
      ],
    });
    const statuses = new Map<number, number>();
    for (const [i, c] of cases.entries()) {
      const { status } = await sendRaw(port, c);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      assert.ok(
        status < 500 || status === 503,
        `case ${i} of seed ${seed} got ${status}: ${c.toString('latin1').slice(0, 200)}`,
      );
    }
    assert.ok(
      (statuses.get(400) ?? 0) > 0 && (statuses.get(200) ?? 0) + (statuses.get(404) ?? 0) > 0,
      JSON.stringify([...statuses]),
    );
    const r = await call('GET', '/api/v1/namespaces/default/pods/svc-a1b2c');
    assert.equal(r.status, 200);
  });
});

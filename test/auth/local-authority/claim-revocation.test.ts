/**
 * `tether up`'s local authority ends identities with their claims too: it serves list + watch of its
 * SandboxClaims, so the memory server revokes a removed instance's claim keys within 2 s, as on a cluster.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type AuthorityApiServer, startAuthorityApi } from '../../../src/auth/local-authority/api-server.ts';
import { LocalIdentityAuthority } from '../../../src/auth/local-authority/authority.ts';
import { kubernetesPlugins } from '../../../src/cli/kubernetes-option.ts';
import { systemClock } from '../../../src/common/clock.ts';
import { silentLogger } from '../../../src/common/log.ts';
import { kubeFlags } from '../../helpers/kube-flags.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../../helpers/memory-server.ts';

let dir: string;
let authority: LocalIdentityAuthority;
let api: AuthorityApiServer;
let srv: TestMemoryServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tether-authority-revoke-'));
  authority = await LocalIdentityAuthority.create({ clock: systemClock });
  api = await startAuthorityApi(authority, { kubeconfigPath: join(dir, 'kubeconfig') });
  srv = await startTestMemoryServer({ plugins: kubernetesPlugins(kubeFlags(api.kubeconfigPath), silentLogger()) });
});
after(async () => {
  await srv.close();
  await api.close();
  rmSync(dir, { recursive: true, force: true });
});

async function keyOf(instance: string, claim: string): Promise<string> {
  authority.addInstance('default', instance, 'svc');
  authority.claimInstance('default', instance, claim);
  const token = await authority.issueToken('default', instance, 'tether');
  const r = await srv.call('POST', '/v1/auth/kubernetes', { body: { token } });
  assert.equal(r.status, 200, r.text);
  return r.body.key as string;
}

describe('local authority claims', () => {
  it('lists and watches claims like the API server, and a removed instance takes its keys along within 2 s', async () => {
    const key = await keyOf('svc-aaaaa', 'svc-0000000001');
    const other = await keyOf('svc-bbbbb', 'svc-0000000002');
    const list = await fetch(`${api.url}/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/default/sandboxclaims`, {
      headers: { authorization: `Bearer ${kubeToken()}` },
    });
    const body = (await list.json()) as { kind: string; items: { metadata: { name: string } }[] };
    assert.equal(body.kind, 'SandboxClaimList');
    assert.deepEqual(body.items.map((i) => i.metadata.name).sort(), ['svc-0000000001', 'svc-0000000002']);

    authority.removeInstance('default', 'svc-aaaaa');
    const t0 = performance.now();
    let status = 200;
    while (status === 200 && performance.now() - t0 < 5000) {
      const r = await srv.call('GET', '/v1/whoami', { key });
      status = r.status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 20));
      else assert.equal(r.body.error.code, 'key_revoked');
    }
    assert.equal(status, 401);
    assert.ok(performance.now() - t0 < 2000);
    assert.equal((await srv.call('GET', '/v1/whoami', { key: other })).status, 200);
  });
});

/** The bearer token of the authority's kubeconfig. */
function kubeToken(): string {
  const text = readFileSync(api.kubeconfigPath, 'utf8');
  return /token: (\S+)/.exec(text)?.[1] ?? '';
}

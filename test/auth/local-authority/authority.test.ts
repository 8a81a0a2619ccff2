import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createKubernetesExchanger } from '../../../src/auth/exchange/kubernetes-exchanger.ts';
import type { WorkloadExchanger } from '../../../src/auth/exchange/types.ts';
import { type AuthorityApiServer, startAuthorityApi } from '../../../src/auth/local-authority/api-server.ts';
import { LocalIdentityAuthority } from '../../../src/auth/local-authority/authority.ts';
import { ManualClock } from '../../../src/common/clock.ts';
import { TetherError } from '../../../src/common/errors.ts';

const clock = new ManualClock(Date.now());
let authority: LocalIdentityAuthority;
let api: AuthorityApiServer;
let exchanger: WorkloadExchanger;
let dir: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tether-authority-'));
  authority = await LocalIdentityAuthority.create({ clock });
  api = await startAuthorityApi(authority, { kubeconfigPath: join(dir, 'kubeconfig') });
  // the memory server's own exchanger, through @kubernetes/client-node, exactly as on a cluster
  exchanger = createKubernetesExchanger({
    kubeconfig: api.kubeconfigPath,
    audience: 'tether',
    requestTimeoutMs: 10_000,
  });
});
after(async () => {
  await api.close();
  rmSync(dir, { recursive: true, force: true });
});

const refusedWith = (code: string, pattern?: RegExp) => (err: unknown) =>
  err instanceof TetherError && err.code === code && (!pattern || pattern.test(err.message));

describe('LocalIdentityAuthority through the Kubernetes exchanger', () => {
  it('writes a 0600 kubeconfig and refuses callers without its bearer token', async () => {
    assert.equal(statSync(api.kubeconfigPath).mode & 0o777, 0o600);
    const r = await fetch(`${api.url}/api/v1/namespaces/default/pods/x`);
    assert.equal(r.status, 401);
    assert.equal(((await r.json()) as { kind: string }).kind, 'Status');
  });

  it('refuses a warm instance, then names the claim once a session takes it', async () => {
    authority.addInstance('default', 'svc-a1b2c', 'svc');
    const token = await authority.issueToken('default', 'svc-a1b2c', 'tether');
    await assert.rejects(exchanger.exchange(token), refusedWith('warm_pool', /^still in warm pool$/));
    authority.claimInstance('default', 'svc-a1b2c', 'svc-0123456789');
    const id = await exchanger.exchange(token);
    assert.deepEqual([id.tenant, id.agent, id.session], ['default', 'svc-0123456789', 'svc-a1b2c']);
    assert.equal(id.tokenExpiresAt, Math.floor(clock.now() / 1000) * 1000 + 3_600_000);
  });

  it('refuses the token of a removed instance, and a new instance of the same claim gets the same agent', async () => {
    authority.addInstance('default', 'svc-old11', 'svc');
    authority.claimInstance('default', 'svc-old11', 'svc-claimxyz0');
    const oldToken = await authority.issueToken('default', 'svc-old11', 'tether');
    authority.removeInstance('default', 'svc-old11');
    await assert.rejects(exchanger.exchange(oldToken), refusedWith('unauthenticated'));
    authority.addInstance('default', 'svc-new22', 'svc');
    authority.claimInstance('default', 'svc-new22', 'svc-claimxyz0');
    const id = await exchanger.exchange(await authority.issueToken('default', 'svc-new22', 'tether'));
    assert.deepEqual([id.agent, id.session], ['svc-claimxyz0', 'svc-new22']);
  });

  it('refuses another audience, an expired token and a forged one', async () => {
    authority.addInstance('default', 'svc-aud33', 'svc');
    authority.claimInstance('default', 'svc-aud33', 'svc-aud');
    const other = await authority.issueToken('default', 'svc-aud33', 'kubernetes');
    await assert.rejects(exchanger.exchange(other), refusedWith('unauthenticated'));
    const short = await authority.issueToken('default', 'svc-aud33', 'tether', 60);
    clock.advance(61_000);
    await assert.rejects(exchanger.exchange(short), refusedWith('unauthenticated'));
    const good = await authority.issueToken('default', 'svc-aud33', 'tether');
    const [h, p] = good.split('.');
    await assert.rejects(exchanger.exchange(`${h}.${p}.${'A'.repeat(86)}`), refusedWith('unauthenticated'));
  });
});

/**
 * Identity that ends with the claim: the memory server watches SandboxClaims and revokes the keys minted
 * for a claim (that uid) when it is deleted — within 2 s — while a same-name new claim keeps its own key;
 * a claim deleted while the server was down loses its keys when the server lists claims again at start.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kubernetesPlugins } from '../../src/cli/kubernetes-option.ts';
import { silentLogger } from '../../src/common/log.ts';
import { kubeFlags } from '../helpers/kube-flags.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';
import { type KubeDouble, startKubeDouble } from '../kube/double.ts';

let kube: KubeDouble;
const dataDir = mkdtempSync(join(tmpdir(), 'tether-revoke-'));
const adminKey = `tth_${'a'.repeat(16)}_${'b'.repeat(64)}`;

const start = () =>
  startTestMemoryServer({
    dataDir,
    adminKey,
    plugins: kubernetesPlugins(kubeFlags(kube.kubeconfigPath), silentLogger()),
  });

async function keyFor(srv: TestMemoryServer, claim: string): Promise<string> {
  const pod = kube.createClaim(claim, { warmPool: true });
  const r = await srv.call('POST', '/v1/auth/kubernetes', { body: { token: kube.issueToken(pod) } });
  assert.equal(r.status, 200, r.text);
  return r.body.key as string;
}

const whoami = async (srv: TestMemoryServer, key: string) => (await srv.call('GET', '/v1/whoami', { key })).status;

/** Polls whoami until the key is refused as revoked; returns the ms it took (fails after 5 s). */
async function revokedWithin(srv: TestMemoryServer, key: string): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < 5000) {
    const r = await srv.call('GET', '/v1/whoami', { key });
    if (r.status === 401) {
      assert.equal(r.body.error.code, 'key_revoked');
      return performance.now() - t0;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return assert.fail('the key was not revoked within 5 s');
}

before(async () => {
  kube = await startKubeDouble();
});
after(async () => {
  await kube.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('claim revocation', () => {
  it('revokes the keys of a deleted claim within 2 s; other claims and a same-name new claim keep theirs', async (t) => {
    const srv = await start();
    t.after(() => srv.close(true));
    const doomed = await keyFor(srv, 'rv-1');
    const bystander = await keyFor(srv, 'rv-2');
    assert.equal(await whoami(srv, doomed), 200);

    kube.deleteClaim('rv-1');
    const ms = await revokedWithin(srv, doomed);
    assert.ok(ms < 2000, `revoked after ${ms} ms`);
    assert.equal(await whoami(srv, bystander), 200);

    const reborn = await keyFor(srv, 'rv-1');
    assert.equal(await whoami(srv, reborn), 200);
    kube.recreateClaim('rv-1', { warmPool: true });
    // The old claim with that name went away again: the reborn key goes, whatever the watch saw.
    await revokedWithin(srv, reborn);
  });

  it('revokes at the next start the keys of a claim deleted while the server was down', async () => {
    const first = await start();
    const key = await keyFor(first, 'down-1');
    await first.close(true);
    kube.deleteClaim('down-1');
    const second = await start();
    try {
      await revokedWithin(second, key);
    } finally {
      await second.close(true);
    }
  });
});

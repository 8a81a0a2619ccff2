/**
 * Closing the claim revoker stops its watches quietly: the watch aborted by stop() is not reported as a failure to
 * watch (a shutdown of `tether up` or `tether memory` used to log "cannot watch sandboxclaims").
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ClaimRevoker } from '../../src/auth/claim-revocation.ts';
import type { KeyService } from '../../src/auth/key-service.ts';
import { systemClock } from '../../src/common/clock.ts';
import { createLogger } from '../../src/common/log.ts';
import { loadKubeConfig } from '../../src/kube/client.ts';
import { createObjectClient } from '../../src/kube/object-client.ts';
import { type KubeDouble, startKubeDouble } from '../kube/double.ts';

let kube: KubeDouble;
before(async () => {
  kube = await startKubeDouble();
});
after(() => kube.close());

describe('ClaimRevoker.close', () => {
  it('stops a live watch without a warning', async () => {
    const lines: { level: number; msg: string }[] = [];
    const log = createLogger({ format: 'json', destination: { write: (l: string) => lines.push(JSON.parse(l)) } });
    const kubeconfig = loadKubeConfig({ kubeconfig: kube.kubeconfigPath });
    // No key exists: each relist asks to revoke the keys of vanished claims and gets none.
    const keys = { revokeWorkloadKeys: async () => [] } as unknown as KeyService;
    const revoker = new ClaimRevoker({
      kubeconfig,
      client: createObjectClient(kubeconfig),
      keys,
      clock: systemClock,
      log,
    });
    await revoker.watch('agents');
    // The watch stream is open once the double counts it.
    for (let i = 0; i < 100 && !kube.calls.some((c) => c.verb === 'watch'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(
      kube.calls.some((c) => c.verb === 'watch'),
      'the watch was opened',
    );
    revoker.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(
      lines.filter((l) => l.level >= 40).map((l) => l.msg),
      [],
    );
  });
});

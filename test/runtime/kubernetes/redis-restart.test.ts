/**
 * The Kubernetes runtime with the Redis session store across a gateway restart: `list` shows the claims a
 * previous gateway left, `adopt` rebinds only the recorded claim (same uid), and a restarted gateway restores
 * its sessions from Redis onto their claims (same pod, same deadlines) without deleting anything.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../../src/common/log.ts';
import { RedisSessionStore } from '../../../src/sessions/redis/redis-store.ts';
import { parseRedisUrl } from '../../../src/sessions/redis/redis-url.ts';
import { admin, send } from '../../gateway/helpers/harness.ts';
import { startRedis } from '../../helpers/redis.ts';
import { type KubeDouble, startKubeDouble } from '../../kube/double.ts';
import { claimsOf, kubeServiceYaml, startKubeGateway } from './helpers.ts';

let kube: KubeDouble;
before(async () => {
  kube = await startKubeDouble({ controllers: true });
});
after(() => kube.close());

const claims = (service: string) => claimsOf(kube, service);

interface AdminSession {
  id: string;
  instance: string;
  idle_deadline: string | null;
  expires_at: string | null;
  gateway: string;
}

describe('Kubernetes runtime on Redis: restart', () => {
  it('a restarted gateway adopts its sessions’ claims from Redis: same pod, same deadlines, nothing deleted', async (t) => {
    const redis = await startRedis(t);
    const prefix = redis.prefix();
    const store = () =>
      new RedisSessionStore({ target: parseRedisUrl(redis.url), prefix, log: silentLogger(), maxBackoffMs: 100 });
    const yaml = kubeServiceYaml('kr', {
      'serving.knative.dev/session-timeout': '1h',
      'serving.knative.dev/session-expiry': '2h',
    });
    const first = await startKubeGateway(t, kube, yaml, { sessionStore: store(), gatewayId: 'gw-k' });
    const a = await send(first.gw.publicUrl, { host: first.host('kr'), path: '/env', headers: { cookie: 'app=k1' } });
    assert.equal(a.status, 200, a.body);
    const before = await admin<AdminSession[]>(first.gw, '/_tether/sessions');
    assert.equal(before.length, 1);
    const [claim] = claims('kr');
    await first.gw.close();

    const second = await startKubeGateway(t, kube, yaml, { sessionStore: store(), gatewayId: 'gw-k' });
    const after = await admin<AdminSession[]>(second.gw, '/_tether/sessions');
    const view = (l: AdminSession[]) => l.map((s) => [s.id, s.instance, s.idle_deadline, s.expires_at, s.gateway]);
    assert.deepEqual(view(after), view(before), 'the binding and its deadlines, from Redis');
    const [inst] = await admin<{ name: string; state: string }[]>(second.gw, '/_tether/instances');
    assert.equal(inst?.name, before[0]?.instance);
    assert.equal(inst?.state, 'running');
    const b = await send(second.gw.publicUrl, { host: second.host('kr'), path: '/env', headers: { cookie: 'app=k1' } });
    assert.equal(b.status, 200, b.body);
    assert.equal(JSON.parse(b.body).pid, JSON.parse(a.body).pid, 'the same pod');
    assert.equal(JSON.parse(b.body).count, 2);
    assert.deepEqual(
      claims('kr').map((c) => c.metadata.uid),
      [claim?.metadata.uid],
    );
  });

  it('list shows claims nobody here owns; adopt takes only the recorded uid', async (t) => {
    const yaml = kubeServiceYaml('kl', {});
    const first = await startKubeGateway(t, kube, yaml);
    const r = await send(first.gw.publicUrl, { host: first.host('kl'), path: '/env', headers: { cookie: 'app=l1' } });
    assert.equal(r.status, 200, r.body);
    const [claim] = claims('kl');
    await first.gw.close();

    // A runtime of a gateway without a store: the claim is listed, never deleted by the gateway at start.
    const second = await startKubeGateway(t, kube, yaml);
    const listed = (await second.runtime.list()).filter((i) => i.service === 'kl');
    assert.equal(listed.length, 1);
    const found = listed[0];
    assert.equal(found?.incarnation, claim?.metadata.uid);
    assert.equal(found?.state, 'running');
    assert.equal(found?.pid, null);
    assert.match(found?.host ?? '', /^127\./);
    assert.equal(claims('kl').length, 1, 'not deleted at start');
    const record = { ...(found as NonNullable<typeof found>) };
    assert.equal(await second.runtime.adopt({ ...record, incarnation: 'another-uid' }), undefined);
    const adopted = await second.runtime.adopt(record);
    assert.equal(adopted?.name, record.name);
    assert.equal((await second.runtime.list()).filter((i) => i.service === 'kl').length, 0, 'owned now');
    await second.runtime.pause(record.name);
    await second.runtime.delete(record.name);
    assert.equal(claims('kl').length, 0);
  });
});

import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { isTetherError } from '../../src/common/errors.ts';
import { silentLogger } from '../../src/common/log.ts';
import { startGateway } from '../../src/gateway/gateway.ts';
import { DuplicateServiceError, parseManifestText } from '../../src/gateway/services/load-services.ts';
import type { ServiceState } from '../../src/gateway/state.ts';
import { hit, never, settle, setupCore as setup } from './helpers/core-setup.ts';
import { admin, serviceYaml, testGatewayDrivers, writeManifest } from './helpers/harness.ts';

const manifests = (...docs: string[]) => parseManifestText(docs.join('---\n'), '/m/reloaded.yaml');
const svcOf = (services: ServiceState[], name: string) => services.find((s) => s.config.name === name);

describe('reloading manifests (applyServices)', () => {
  it('adds a new service and serves it; an unchanged one keeps its sessions and instances', async () => {
    const { core, svc, runtime } = setup({ 'serving.knative.dev/session-timeout': '10m' });
    const s = await hit(core, svc, 'k1');
    const result = core.applyServices(
      manifests(
        serviceYaml('svc', { 'serving.knative.dev/session-timeout': '10m' }),
        serviceYaml('fresh', { 'serving.knative.dev/warm-pool': '1' }),
      ),
    );
    assert.deepEqual(result, { added: ['fresh'], removed: [], changed: [], unchanged: ['svc'] });
    assert.equal(svc.byKey.get('k1'), s);
    const fresh = svcOf(core.services, 'fresh') as ServiceState;
    assert.equal(fresh.host, 'fresh.default.example.com');
    await settle(core, fresh);
    assert.equal([...fresh.instances.values()].filter((i) => i.warm).length, 1, 'its warm pool is filled');
    const other = await hit(core, fresh, 'f1');
    assert.equal(other.instance.service, fresh);
    assert.equal(runtime.count('delete'), 0);
  });

  it('a removed service: queued requests get 503, its sessions end and its instances are deleted', async () => {
    const { core, svc, runtime } = setup({ 'autoscaling.knative.dev/max-scale': '1' }, { more: { keep: {} } });
    await hit(core, svc, 'a');
    await hit(core, svc, 'a'); // established: not reclaimed for the queued one
    const queued = core.scheduler.acquire(svc, 'b', never);
    const result = core.applyServices(manifests(serviceYaml('keep', {})));
    assert.deepEqual(result, { added: [], removed: ['svc'], changed: [], unchanged: ['keep'] });
    await assert.rejects(
      queued,
      (err: unknown) => isTetherError(err) && err.status === 503 && /was removed/.test(err.message),
    );
    assert.equal(svc.sessions.size, 0);
    assert.deepEqual(
      core.services.map((s) => s.config.name),
      ['keep'],
    );
    await settle(core, svc);
    assert.equal(svc.instances.size, 0);
    assert.equal([...runtime.live.keys()].filter((n) => n.startsWith('svc-')).length, 0);
  });

  it('changed annotations apply to live sessions from now on; the binding is kept', async () => {
    const { clock, core, svc } = setup({ 'serving.knative.dev/session-timeout': '30m' });
    const s = await hit(core, svc, 'k1');
    clock.advance(5 * 60_000);
    const result = core.applyServices(manifests(serviceYaml('svc', { 'serving.knative.dev/session-timeout': '10m' })));
    assert.deepEqual(result.changed, ['svc']);
    core.reconcile();
    assert.equal(s.live, true);
    assert.equal(s.instance.retired, false, 'same container: the instance is not retired');
    clock.advance(5 * 60_000 - 1);
    core.reconcile();
    assert.equal(s.live, true);
    clock.advance(1);
    core.reconcile();
    assert.equal(s.live, false, 'the new 10m timeout counts the idle time before the reload');
  });

  it('a changed container: unbound instances are replaced, a bound one serves its session to its end on the old spec and takes no new one', async () => {
    const { core, svc, runtime } = setup({
      'autoscaling.knative.dev/target': '2',
      'serving.knative.dev/warm-pool': '1',
    });
    await settle(core, svc);
    const s = await hit(core, svc, 'k1');
    await settle(core, svc);
    const oldWarm = [...svc.instances.values()].find((i) => i.warm);
    assert.ok(oldWarm);
    const env = '          env:\n            - name: GREETING\n              value: "v2"';
    core.applyServices(
      manifests(
        serviceYaml('svc', { 'autoscaling.knative.dev/target': '2', 'serving.knative.dev/warm-pool': '1' }, env),
      ),
    );
    assert.equal(s.instance.retired, true);
    assert.equal(oldWarm.state, 'stopping');
    await settle(core, svc);
    assert.equal(svc.byKey.get('k1'), s, 'the session keeps its instance');
    assert.equal((await hit(core, svc, 'k1')).instance, s.instance);
    const newWarm = [...svc.instances.values()].find((i) => i.warm);
    assert.ok(newWarm && newWarm !== oldWarm);
    assert.equal(runtime.specs.get(newWarm.name)?.env.GREETING, 'v2');
    assert.equal(runtime.specs.get(s.instance.name)?.env.GREETING, undefined);
    // A slot is free on the old instance (target 2), yet a new session gets the new spec.
    const second = await hit(core, svc, 'k2');
    assert.notEqual(second.instance, s.instance);
    assert.equal(runtime.specs.get(second.instance.name)?.env.GREETING, 'v2');
  });

  it('a lowered warm-pool deletes the idle warm instances beyond it, so the service scales to zero', async () => {
    const { core, svc, runtime } = setup({ 'serving.knative.dev/warm-pool': '2' });
    core.reconcile();
    await settle(core, svc);
    assert.equal([...svc.instances.values()].filter((i) => i.warm && i.state === 'paused').length, 2);
    core.applyServices(manifests(serviceYaml('svc', { 'serving.knative.dev/warm-pool': '1' })));
    core.reconcile();
    await settle(core, svc);
    assert.equal(svc.instances.size, 1, 'one warm instance is kept');
    core.applyServices(manifests(serviceYaml('svc', { 'serving.knative.dev/warm-pool': '0' })));
    core.reconcile();
    await settle(core, svc);
    assert.equal(svc.instances.size, 0);
    assert.equal(runtime.live.size, 0);
  });

  it('a lowered warm-pool keeps an instance that was just claimed from the pool', async () => {
    const { core, svc } = setup({ 'serving.knative.dev/warm-pool': '1' });
    core.reconcile();
    await settle(core, svc);
    assert.equal([...svc.instances.values()].filter((i) => i.warm && i.state === 'paused').length, 1);
    const s = await hit(core, svc, 'k1');
    core.applyServices(manifests(serviceYaml('svc', { 'serving.knative.dev/warm-pool': '0' })));
    core.reconcile();
    await settle(core, svc);
    assert.equal(s.live, true);
    assert.equal(s.fromWarm, true, 'served by the warm instance');
    assert.deepEqual([...svc.instances.values()], [s.instance]);
    assert.notEqual(s.instance.state, 'stopping');
  });

  it('a service whose namespace changed is removed and added under its new host', async () => {
    const { core, svc } = setup({});
    await hit(core, svc, 'k1');
    const moved = serviceYaml('svc', {}).replace('  name: svc\n', '  name: svc\n  namespace: team-b\n');
    const result = core.applyServices(manifests(moved));
    assert.deepEqual([result.removed, result.added], [['svc'], ['svc']]);
    assert.equal(core.services[0]?.host, 'svc.team-b.example.com');
    assert.equal(core.services[0]?.sessions.size, 0);
  });
});

describe('Gateway.reload()', () => {
  it('refuses a manifest set with one service name in two namespaces and keeps the running services', async (t) => {
    const file = await writeManifest(t, serviceYaml('agent', {}));
    const log = silentLogger();
    const drivers = testGatewayDrivers({ log, graceMs: 5000 });
    const gw = await startGateway({ services: file, port: 0, adminPort: 0, host: '127.0.0.1', log, ...drivers });
    t.after(() => gw.close());
    const other = serviceYaml('agent', {}).replace('  name: agent\n', '  name: agent\n  namespace: team-b\n');
    await writeFile(file, `${serviceYaml('agent', {})}---\n${other}`);
    await assert.rejects(gw.reload(), (err: unknown) => err instanceof DuplicateServiceError);
    const services = await admin<{ host: string }[]>(gw, '/_tether/services');
    assert.deepEqual(
      services.map((s) => s.host),
      ['agent.default.example.com'],
    );
  });
});

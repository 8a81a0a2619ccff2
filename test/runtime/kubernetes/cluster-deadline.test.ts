/**
 * Every request that waits on the cluster has a deadline: with the double's agent-sandbox controllers halted
 * (the API server answers, pods go on, nothing binds, starts, suspends or resumes), a new session, a resume
 * from Suspended, a request behind a pause in flight and a returning session's claim after a gateway restart
 * each get 503 + Retry-After at the
 * deadline, the log names what the cluster did not do, the admin API shows the instance waiting and why, and
 * each is served once the controllers run again (the returning session on its own claim, never deleted).
 * The start and resume timeouts are a minute here, so a 503 can only come from the 1 s deadline.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../src/common/log.ts';
import type { Gateway } from '../../../src/gateway/gateway.ts';
import { SANDBOX } from '../../../src/kube/agent-sandbox.ts';
import { admin, type Reply, send } from '../../gateway/helpers/harness.ts';
import { type KubeDouble, startKubeDouble } from '../../kube/double.ts';
import { claimsOf, kubeServiceYaml, startKubeGateway, untilStore } from './helpers.ts';

let kube: KubeDouble;
before(async () => {
  kube = await startKubeDouble({ controllers: true });
});
after(() => kube.close());

const DEADLINE_MS = 1000;
const NS = 'agents';

interface WaitingInstance {
  name: string;
  service: string;
  waiting_on: { what: string; reason: string | null; hint: string; since: string } | null;
}

/** Gateway options with the short deadline and a log the test reads. */
function withLog() {
  const lines: { level: number; msg: string; instance?: string }[] = [];
  const log = createLogger({ format: 'json', destination: { write: (l: string) => lines.push(JSON.parse(l)) } });
  return { lines, options: { clusterWaitMs: DEADLINE_MS, startTimeoutMs: 60_000, operationTimeoutMs: 60_000, log } };
}

const pauseYaml = (name: string) =>
  kubeServiceYaml(name, {
    'serving.knative.dev/sandbox-idle-policy': 'pause',
    'serving.knative.dev/session-timeout': '30s',
  });

function get(gw: Gateway, service: string, cookie: string): Promise<Reply> {
  return send(gw.publicUrl, { host: `${service}.default.example.com`, path: '/env', headers: { cookie } });
}

/** Asks again after each 503 (each one comes at the deadline) until another answer, at most 30 times. */
async function served(gw: Gateway, service: string, cookie: string): Promise<Reply> {
  let r = await get(gw, service, cookie);
  for (let i = 0; i < 30 && r.status === 503; i++) r = await get(gw, service, cookie);
  return r;
}

function assertDeadline503(r: Reply): void {
  assert.equal(r.status, 503, r.body);
  assert.match(String(r.headers['retry-after']), /^[1-5]$/);
  const body = JSON.parse(r.body) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'unavailable');
  assert.match(body.error.message, /still waiting on the cluster after 1 s/);
}

async function waitingOf(gw: Gateway, service: string): Promise<WaitingInstance | undefined> {
  return (await admin<WaitingInstance[]>(gw, '/_tether/instances')).find((i) => i.service === service);
}

/** Pauses the session's instance by its idle timeout and waits until its Sandbox is Suspended. */
async function idleOut(k: { gw: Gateway; clock: { advance(ms: number): void } }, service: string): Promise<string> {
  const [claim] = claimsOf(kube, service);
  k.clock.advance(31_000);
  k.gw.reconcile();
  const sandbox = claim?.metadata.annotations?.['agents.x-k8s.io/sandbox-name'] ?? '';
  await untilStore(kube, 'the sandbox suspended', () => {
    const s = kube.store.get(SANDBOX, NS, sandbox);
    const c = (s?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
    return c?.some((x) => x.type === 'Suspended' && x.status === 'True') ? true : undefined;
  });
  return sandbox;
}

describe('Kubernetes runtime: a deadline on every wait for the cluster', () => {
  it('answers a new session 503 + Retry-After while its claim is not bound, then serves it', async (t) => {
    const { lines, options } = withLog();
    const { gw } = await startKubeGateway(t, kube, pauseYaml('dl-new'), options);
    kube.controller!.halt();
    try {
      assertDeadline503(await get(gw, 'dl-new', 'app=n1'));
      const warn = lines.find((l) => / not bound after /.test(l.msg));
      assert.match(
        warn?.msg ?? '',
        /^claim dl-new-[0-9a-f]{32} not bound after 1 s: is the agent-sandbox controller running\?$/,
      );
      const inst = await waitingOf(gw, 'dl-new');
      assert.match(inst?.waiting_on?.what ?? '', /^claim dl-new-[0-9a-f]{32} not bound$/);
      assert.match(inst?.waiting_on?.hint ?? '', /agent-sandbox controller/);
    } finally {
      kube.controller!.proceed();
    }
    const r = await served(gw, 'dl-new', 'app=n1');
    assert.equal(r.status, 200, r.body);
    assert.equal((await waitingOf(gw, 'dl-new'))?.waiting_on, null);
  });

  it('answers a resume from Suspended 503 + Retry-After while the sandbox does not run, then serves it', async (t) => {
    const { lines, options } = withLog();
    const k = await startKubeGateway(t, kube, pauseYaml('dl-res'), options);
    const first = await served(k.gw, 'dl-res', 'app=r1');
    assert.equal(first.status, 200, first.body);
    const [claim] = claimsOf(kube, 'dl-res');
    const sandbox = await idleOut(k, 'dl-res');
    kube.controller!.halt();
    try {
      assertDeadline503(await get(k.gw, 'dl-res', 'app=r1'));
      const warn = lines.find((l) => / after 1 s: /.test(l.msg));
      assert.equal(
        warn?.msg,
        `sandbox ${sandbox} change to operatingMode Running not observed after 1 s: is the agent-sandbox controller running?`,
      );
      assert.match((await waitingOf(k.gw, 'dl-res'))?.waiting_on?.what ?? '', /operatingMode Running not observed/);
    } finally {
      kube.controller!.proceed();
    }
    const r = await served(k.gw, 'dl-res', 'app=r1');
    assert.equal(r.status, 200, r.body);
    assert.notEqual(JSON.parse(r.body).pid, JSON.parse(first.body).pid, 'a resumed sandbox runs a new pod');
    assert.deepEqual(
      claimsOf(kube, 'dl-res').map((c) => c.metadata.uid),
      [claim?.metadata.uid],
    );
  });

  it('answers 503 + Retry-After to a request behind a pause the cluster never carries out, then serves it', async (t) => {
    const { options } = withLog();
    const k = await startKubeGateway(t, kube, pauseYaml('dl-mid'), options);
    const first = await served(k.gw, 'dl-mid', 'app=m1');
    assert.equal(first.status, 200, first.body);
    const [claim] = claimsOf(kube, 'dl-mid');
    const sandbox = claim?.metadata.annotations?.['agents.x-k8s.io/sandbox-name'] ?? '';
    kube.controller!.halt();
    try {
      k.clock.advance(31_000);
      k.gw.reconcile();
      await untilStore(kube, 'the pause asked for', () =>
        kube.store.get(SANDBOX, NS, sandbox)?.spec?.operatingMode === 'Suspended' ? true : undefined,
      );
      assertDeadline503(await get(k.gw, 'dl-mid', 'app=m1'));
      assert.match((await waitingOf(k.gw, 'dl-mid'))?.waiting_on?.what ?? '', /operatingMode Suspended not observed/);
    } finally {
      kube.controller!.proceed();
    }
    const r = await served(k.gw, 'dl-mid', 'app=m1');
    assert.equal(r.status, 200, r.body);
  });

  it('answers a returning session 503 + Retry-After while its Suspended claim does not resume, and keeps the claim', async (t) => {
    const yaml = pauseYaml('dl-back');
    const firstGw = await startKubeGateway(t, kube, yaml, withLog().options);
    assert.equal((await served(firstGw.gw, 'dl-back', 'app=b1')).status, 200);
    const [claim] = claimsOf(kube, 'dl-back');
    await idleOut(firstGw, 'dl-back');
    await firstGw.gw.close();

    kube.controller!.halt();
    const { lines, options } = withLog();
    let second: Awaited<ReturnType<typeof startKubeGateway>>;
    try {
      second = await startKubeGateway(t, kube, yaml, options);
      assertDeadline503(await get(second.gw, 'dl-back', 'app=b1'));
      assert.ok(
        lines.some((l) => / not observed after 1 s: is the agent-sandbox controller running\?$/.test(l.msg)),
        JSON.stringify(lines.map((l) => l.msg)),
      );
    } finally {
      kube.controller!.proceed();
    }
    const r = await served(second.gw, 'dl-back', 'app=b1');
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(
      claimsOf(kube, 'dl-back').map((c) => c.metadata.uid),
      [claim?.metadata.uid],
      'the same claim: taken over, never deleted',
    );
  });
});

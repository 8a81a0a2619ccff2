/**
 * The seed's checks 2-4 on one machine: `tether up` runs as a process (isolation as it defaults to) with
 * the memory-agent example, its idle timeout shortened through the manifest's annotation. A warm-pool
 * instance is refused a key until a session claims it; the session remembers a preference twice and saves
 * working state under its lease; its instance is deleted for idleness (releasing the lease); the session's
 * next instance resumes with the saved working state; another session is refused alice's namespace (403).
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { type AdminInstance, send, waitFor } from '../gateway/helpers/harness.ts';
import { startUp } from './helpers/tether-up.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const EXAMPLE = join(ROOT, 'examples/platform/memory-agent.yaml');
const HOST = 'memory-agent.default.example.com';
const ANN = 'serving.knative.dev';

/**
 * The example manifest, moved to `dir`: paths made absolute (they were relative to examples/platform) and
 * a 3 s idle timeout instead of 2 minutes (short, yet room for a slow machine between two requests). The
 * workingDir stays examples/platform, which does not hold the data folder (an isolated instance whose
 * workingDir directly holds the masked data folder does not start).
 */
function exampleManifest(dir: string): string {
  const svc = parse(readFileSync(EXAMPLE, 'utf8'));
  const ann = svc.spec.template.metadata.annotations as Record<string, string>;
  assert.equal(ann[`${ANN}/session-timeout`], '2m', 'the example this test shortens');
  ann[`${ANN}/session-timeout`] = '3s';
  ann['tether.dev/read-only-paths'] = ROOT;
  svc.spec.template.spec.containers[0].workingDir = join(ROOT, 'examples/platform');
  const file = join(dir, 'memory-agent.yaml');
  writeFileSync(file, stringify(svc));
  return file;
}

interface Turn {
  agent: string;
  namespace: string;
  instance: string;
  epoch: number;
  resumed: { epoch: number; fresh: boolean; working_state: { version: number; step: number; focus: string | null } };
  working_state: { version: number; step: number; progress: string; focus: string };
}

interface Refusal {
  status: number;
  code: string;
}

describe('tether up (process): the memory agent saves working state and resumes it', () => {
  it('refuses the warm pool, resumes a session on a new instance, keeps other sessions out', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'tether-up-resume-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const data = join(dir, 'data');
    const { child, out, urls } = await startUp(data, exampleManifest(dir));
    t.after(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    const [publicUrl, adminUrl, memoryUrl] = urls as [string, string, string];
    assert.match(out(), /isolation {7}namespaces\n/, 'isolated, as tether up defaults to on this machine');

    const adminToken = readFileSync(join(data, 'gateway', 'admin.token'), 'utf8').trim();
    const adminKey = readFileSync(join(data, 'memory', 'admin.key'), 'utf8').trim();
    const instances = async () =>
      JSON.parse(
        (await send(adminUrl, { path: '/_tether/instances', headers: { authorization: `Bearer ${adminToken}` } })).body,
      ) as AdminInstance[];
    const exchange = async (name: string) => {
      const token = readFileSync(join(data, 'instances', name, 'token'), 'utf8');
      const r = await fetch(`${memoryUrl}/v1/auth/kubernetes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token }),
      });
      return { status: r.status, body: (await r.json()) as { error?: { code: string; message: string } } };
    };
    const agent = async <T>(session: string, path: string): Promise<T> => {
      const r = await send(publicUrl, { host: HOST, path, headers: { cookie: `agent=${session}` } });
      assert.equal(r.status, 200, r.body);
      return JSON.parse(r.body) as T;
    };

    // Check 1: the warm instance gets no key until a session claims it; then the same instance does.
    const warm = await waitFor('a warm instance', async () => (await instances()).find((i) => i.warm));
    const refused = await exchange(warm.name);
    assert.equal(refused.status, 401);
    assert.deepEqual(refused.body.error, { code: 'warm_pool', message: 'still in warm pool' });

    // Check 2: alice's session claims it, remembers a preference twice, saves working state under its lease.
    const t1 = await agent<Turn>('alice', '/?say=plan+the+trip');
    assert.equal(t1.instance, warm.name, 'the session took the warm instance');
    assert.equal((await exchange(warm.name)).status, 200, 'claimed, the same instance gets a key');
    assert.equal(t1.namespace, `default:${t1.agent}`);
    assert.equal(t1.resumed.fresh, true);
    assert.deepEqual(await agent('alice', '/remember?value=window+seat'), {
      stored: true,
      already_known: false,
      prefers: ['window seat'],
    });
    assert.deepEqual(await agent('alice', '/remember?value=window+seat'), {
      stored: false,
      already_known: true,
      prefers: ['window seat'],
    });
    const t2 = await agent<Turn>('alice', '/?say=book+the+flights');
    assert.equal(t2.instance, t1.instance);
    assert.equal(t2.epoch, t1.epoch, 'one lease for the life of the instance');
    assert.deepEqual(t2.working_state, { version: 2, step: 2, progress: '2 turns', focus: 'book the flights' });

    // Idle for 3 s with the delete policy: the instance goes, and gives its lease back as it goes.
    await waitFor(
      'the idle instance to be deleted',
      async () => !(await instances()).some((i) => i.name === t1.instance),
    );
    const lease = await fetch(`${memoryUrl}/v1/lease?namespace=${t1.namespace}`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    const held = (await lease.json()) as { held: boolean; epoch: number };
    assert.deepEqual({ held: held.held, epoch: held.epoch }, { held: false, epoch: t1.epoch }, 'released on SIGTERM');

    // Check 3: the session's next instance is the same agent and resumes with the saved working state.
    const t3 = await agent<Turn>('alice', '/?say=pack');
    assert.notEqual(t3.instance, t1.instance);
    assert.equal(t3.agent, t1.agent);
    assert.equal(t3.resumed.fresh, false);
    assert.ok(t3.resumed.epoch > t1.epoch, `a higher epoch: ${t3.resumed.epoch} > ${t1.epoch}`);
    assert.deepEqual(
      {
        version: t3.resumed.working_state.version,
        step: t3.resumed.working_state.step,
        focus: t3.resumed.working_state.focus,
      },
      { version: 2, step: 2, focus: 'book the flights' },
    );
    assert.deepEqual(t3.working_state, { version: 3, step: 3, progress: '3 turns', focus: 'pack' });

    const turns = await fetch(`${memoryUrl}/v1/turns?namespace=${t1.namespace}`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    const log = (await turns.json()) as { turns: { content: string; epoch: number }[] };
    assert.deepEqual(
      log.turns.map((t) => [t.content, t.epoch]),
      [
        ['plan the trip', t1.epoch],
        ['book the flights', t1.epoch],
        ['pack', t3.epoch],
      ],
      'each turn recorded under the lease of its instance',
    );

    // Check 4: bob's agent can neither read alice's memory nor resume her (403 namespace_mismatch).
    const probe = await agent<{ recall: Refusal; resume: Refusal }>('bob', `/probe?namespace=${t1.namespace}`);
    assert.deepEqual(
      { recall: [probe.recall.status, probe.recall.code], resume: [probe.resume.status, probe.resume.code] },
      { recall: [403, 'namespace_mismatch'], resume: [403, 'namespace_mismatch'] },
    );
    const bob = await agent<Turn>('bob', '/');
    assert.notEqual(bob.agent, t1.agent);
    assert.equal(bob.resumed.fresh, true, 'bob starts from nothing of alice');

    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    assert.equal(code, 0, out().slice(-2000));
  });
});

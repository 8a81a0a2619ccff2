/**
 * The LangGraph example under `tether up` (a process, isolation as it defaults to): a session runs two
 * steps of the pipeline on one instance, the instance is deleted mid-run (idle, its timeout shortened
 * through the manifest's annotation), and the session's next instance goes on from the last
 * checkpoint — step 3, with steps 1-2 kept as the first instance ran them — to the end. The
 * checkpoints are in the memory server, in the session agent's namespace.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { send, waitFor } from '../gateway/helpers/harness.ts';
import { startUp, upAdminKey, upInstances } from './helpers/tether-up.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const EXAMPLE = join(ROOT, 'examples/langgraph/langgraph-agent.yaml');
const HOST = 'langgraph-agent.default.example.com';
const ANN = 'serving.knative.dev';

/** The example manifest in `dir`: its folder as workingDir, and a 3 s idle timeout instead of 2 minutes. */
function exampleManifest(dir: string): string {
  const svc = parse(readFileSync(EXAMPLE, 'utf8'));
  const ann = svc.spec.template.metadata.annotations as Record<string, string>;
  assert.equal(ann[`${ANN}/session-timeout`], '2m', 'the example this test shortens');
  ann[`${ANN}/session-timeout`] = '3s';
  ann['tether.dev/read-only-paths'] = ROOT;
  svc.spec.template.spec.containers[0].workingDir = join(ROOT, 'examples/langgraph');
  const file = join(dir, 'langgraph-agent.yaml');
  writeFileSync(file, stringify(svc));
  return file;
}

interface Progress {
  instance: string;
  namespace: string;
  step: number;
  log: string[];
  done: boolean;
  next: string[];
  checkpoint_id: string;
}

describe('tether up (process): the LangGraph example', () => {
  it('goes on from the last checkpoint on the next instance after its instance is deleted mid-run', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'tether-up-langgraph-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const data = join(dir, 'data');
    const { child, out, urls } = await startUp(data, exampleManifest(dir));
    t.after(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    const [publicUrl, adminUrl, memoryUrl] = urls;
    const step = async (): Promise<Progress> => {
      const r = await send(publicUrl, { host: HOST, path: '/', headers: { cookie: 'agent=alice' } });
      assert.equal(r.status, 200, `${r.body}\n${out()}`);
      return JSON.parse(r.body) as Progress;
    };

    const s1 = await step();
    const s2 = await step();
    const first = s1.instance;
    assert.equal(s2.instance, first);
    assert.deepEqual(s2.log, [`1. plan (${first})`, `2. gather (${first})`]);
    assert.deepEqual([s2.step, s2.done, s2.next], [2, false, ['draft']]);

    await waitFor(
      'the idle instance to be deleted',
      async () => !(await upInstances(data, adminUrl)).some((i) => i.name === first),
    );

    const s3 = await step();
    const second = s3.instance;
    assert.notEqual(second, first, 'a new instance');
    assert.deepEqual(s3.log, [`1. plan (${first})`, `2. gather (${first})`, `3. draft (${second})`]);
    const s4 = await step();
    const s5 = await step();
    assert.deepEqual([s4.step, s5.step, s5.done], [4, 5, true]);
    assert.deepEqual(s5.log.slice(3), [`4. review (${second})`, `5. publish (${second})`]);

    // The checkpoints live in the session agent's namespace: the last one is the finished run.
    assert.equal(s5.namespace, s1.namespace, 'the same agent on both instances');
    const read = await fetch(`${memoryUrl}/v1/checkpoints?thread_id=job&limit=1&namespace=${s5.namespace}`, {
      headers: { authorization: `Bearer ${upAdminKey(data)}` },
    });
    const latest = (await read.json()) as { checkpoints: { checkpoint_id: string }[] };
    assert.deepEqual(
      latest.checkpoints.map((c) => c.checkpoint_id),
      [s5.checkpoint_id],
    );

    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    assert.equal(code, 0, out());
  });
});

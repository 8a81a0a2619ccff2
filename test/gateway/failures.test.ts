import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import {
  type AdminInstance,
  admin,
  isGone,
  send,
  serviceYaml,
  startTestGateway,
  waitFor,
  writeManifest,
} from './helpers/harness.ts';

/** An app that logs each start to $SPAWN_LOG and exits on its first request (before answering). */
const EXIT_AFTER_FIRST = `import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
appendFileSync(process.env.SPAWN_LOG, process.pid + '\\n');
createServer(() => process.exit(3)).listen(Number(process.env.PORT), '127.0.0.1');
`;

const HOST = 'f.default.example.com';
const YAML = serviceYaml('f', {
  'serving.knative.dev/session-affinity-cookie': 'app',
  'autoscaling.knative.dev/target': '1',
});

describe('instances that fail', () => {
  it('replaces an instance killed from outside for its session', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const r1 = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=k' } });
    const pid = Number(r1.headers['x-pid']);
    process.kill(pid, 'SIGKILL');
    await waitFor(
      'dead instance dropped',
      async () => (await admin<AdminInstance[]>(gw, '/_tether/instances')).length === 0,
    );
    assert.deepEqual(await admin(gw, '/_tether/sessions'), []);
    const r2 = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=k' } });
    assert.equal(r2.status, 200);
    assert.notEqual(Number(r2.headers['x-pid']), pid);
    assert.equal(r2.headers['x-count'], '1');
    const logs = await admin<Array<{ stream: string; line: string }>>(
      gw,
      `/_tether/instances/${(await admin<AdminInstance[]>(gw, '/_tether/instances'))[0]?.name}/logs`,
    );
    assert.ok(logs.some((l) => l.stream === 'stdout' && l.line.includes('listening on')));
  });

  it('answers 502 to a request in flight when its instance dies', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const r1 = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=d' } });
    const pid = Number(r1.headers['x-pid']);
    const hanging = send(gw.publicUrl, { host: HOST, path: '/hang', headers: { cookie: 'app=d' } });
    await waitFor('request in flight', async () => {
      const s = await admin<Array<{ state: string }>>(gw, '/_tether/sessions');
      return s[0]?.state === 'active';
    });
    process.kill(pid, 'SIGKILL');
    const r = await hanging;
    assert.equal(r.status, 502);
    const body = JSON.parse(r.body);
    assert.equal(body.error.code, 'bad_gateway');
    assert.doesNotMatch(r.body, /at .*\.ts/);
  });

  it('answers 503 to the waiting request when an instance is not ready within the start timeout', async (t) => {
    const yaml = serviceYaml('f', {}).replace(
      /- command: .*\n/,
      '- command: ["node", "-e", "setInterval(() => {}, 1000)"]\n',
    );
    const gw = await startTestGateway(t, yaml, { startTimeoutMs: 300 });
    const r = await send(gw.publicUrl, { host: HOST });
    assert.equal(r.status, 503);
    assert.equal(r.headers['retry-after'], '1');
    assert.match(JSON.parse(r.body).error.message, /did not become ready/);
    await waitFor(
      'failed instance dropped',
      async () => (await admin<AdminInstance[]>(gw, '/_tether/instances')).length === 0,
    );
  });

  it('backs off refilling a warm pool whose instances exit after their first request', async (t) => {
    const dir = dirname(await writeManifest(t, '', 'unused.yaml'));
    const app = join(dir, 'exit-after-first.mjs');
    const spawns = join(dir, 'spawns.log');
    await writeFile(app, EXIT_AFTER_FIRST);
    await writeFile(spawns, '');
    const yaml = serviceYaml('crashy', { 'serving.knative.dev/warm-pool': '2' })
      .replace(/- command: .*\n/, `- command: ["node", "${app}"]\n`)
      .concat(`          env:\n            - name: SPAWN_LOG\n              value: "${spawns}"\n`);
    await startTestGateway(t, yaml, { waitForWarm: false });
    const count = () => readFileSync(spawns, 'utf8').split('\n').filter(Boolean).length;
    await waitFor('the first warm instances', () => count() >= 2);
    // An observation window, not a wait for an event: without back-off this refills dozens of times.
    await delay(3000);
    const n = count();
    console.log('SPAWNS', n);
    assert.ok(n <= 6, `${n} spawns in 3 s`);
  });

  it('leaves no instance process behind after close()', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const pids = [];
    for (const k of ['a', 'b'])
      pids.push(Number((await send(gw.publicUrl, { host: HOST, headers: { cookie: `app=${k}` } })).headers['x-pid']));
    await gw.close();
    for (const pid of pids) assert.ok(isGone(pid), `pid ${pid} still alive`);
  });
});

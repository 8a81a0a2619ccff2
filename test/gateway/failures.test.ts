import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AdminInstance, admin, isGone, send, serviceYaml, startTestGateway, waitFor } from './helpers/harness.ts';

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

  it('leaves no instance process behind after close()', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const pids = [];
    for (const k of ['a', 'b'])
      pids.push(Number((await send(gw.publicUrl, { host: HOST, headers: { cookie: `app=${k}` } })).headers['x-pid']));
    await gw.close();
    for (const pid of pids) assert.ok(isGone(pid), `pid ${pid} still alive`);
  });
});

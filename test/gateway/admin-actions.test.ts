/**
 * `DELETE /_tether/sessions/{id}` and `DELETE /_tether/instances/{name}` on a real gateway (issue 22 item 6),
 * and the CLI commands over them (`tether sessions end`, `tether instances delete`, bin/tether as a process).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Gateway } from '../../src/gateway/gateway.ts';
import { runTether } from '../helpers/tether-cli.ts';
import {
  type AdminInstance,
  isGone,
  type Reply,
  send,
  serviceYaml,
  startTestGateway,
  waitFor,
} from './helpers/harness.ts';

const TOKEN = 'admin-actions-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const YAML = [
  serviceYaml('one', { 'serving.knative.dev/session-affinity-cookie': 'app' }),
  serviceYaml('pair', { 'serving.knative.dev/session-affinity-cookie': 'app', 'autoscaling.knative.dev/target': '2' }),
  serviceYaml('held', {
    'serving.knative.dev/session-affinity-cookie': 'app',
    'serving.knative.dev/sandbox-idle-policy': 'pause',
    'serving.knative.dev/session-timeout': '1s',
  }),
].join('---\n');

interface Session {
  id: string;
  service: string;
  instance: string;
  state: string;
  key?: string;
}

const pidOf = (r: Reply) => Number(r.headers['x-pid']);

function hit(gw: Gateway, service: string, key: string): Promise<Reply> {
  return send(gw.publicUrl, { host: `${service}.default.example.com`, headers: { cookie: `app=${key}` } });
}

async function adminCall<T>(gw: Gateway, method: string, path: string): Promise<{ status: number; body: T }> {
  const r = await send(gw.adminUrl, { method, path, headers: AUTH });
  return { status: r.status, body: JSON.parse(r.body) as T };
}

async function sessionOf(gw: Gateway, service: string, key: string): Promise<Session> {
  const list = (await adminCall<Session[]>(gw, 'GET', '/_tether/sessions?reveal=keys')).body;
  const s = list.find((x) => x.service === service && x.key === key);
  assert.ok(s, `session ${key} of ${service} is listed`);
  return s;
}

describe('DELETE /_tether/sessions/{id}', () => {
  it('ends the session as an idle delete would: its instance goes, its next request gets a new one', async (t) => {
    const gw = await startTestGateway(t, YAML, { adminToken: TOKEN });
    const a = await hit(gw, 'one', 'a');
    const b = await hit(gw, 'one', 'b');
    assert.notEqual(pidOf(a), pidOf(b));
    const s = await sessionOf(gw, 'one', 'a');
    assert.equal(s.id.length, 12);
    const ended = await adminCall<{ id: string; instance: string; instance_deleted: boolean }>(
      gw,
      'DELETE',
      `/_tether/sessions/${s.id}`,
    );
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
    assert.deepEqual(ended.body, { id: s.id, service: 'one', instance: s.instance, instance_deleted: true });
    await waitFor('instance of a gone', () => isGone(pidOf(a)));
    const list = (await adminCall<Session[]>(gw, 'GET', '/_tether/sessions')).body;
    assert.deepEqual(
      list.map((x) => x.id),
      [(await sessionOf(gw, 'one', 'b')).id],
      'only b is left',
    );
    const again = await hit(gw, 'one', 'a');
    assert.equal(again.status, 200);
    assert.notEqual(pidOf(again), pidOf(a), 'a new instance');
    assert.equal(pidOf(await hit(gw, 'one', 'b')), pidOf(b), 'the other session is untouched');
    // Ended again: nothing of that id is left on the old instance (the new session has the same id, a new instance).
    assert.notEqual((await sessionOf(gw, 'one', 'a')).instance, s.instance);
  });

  it('ends a paused session too, and keeps the instance while another session uses it', async (t) => {
    const gw = await startTestGateway(t, YAML, { adminToken: TOKEN });
    const held = await hit(gw, 'held', 'p');
    await waitFor('paused', async () => (await sessionOf(gw, 'held', 'p')).state === 'paused');
    const p = await sessionOf(gw, 'held', 'p');
    assert.equal((await adminCall(gw, 'DELETE', `/_tether/sessions/${p.id}`)).status, 200);
    await waitFor('paused instance deleted', () => isGone(pidOf(held)));

    const x = await hit(gw, 'pair', 'x');
    const y = await hit(gw, 'pair', 'y');
    assert.equal(pidOf(x), pidOf(y), 'target 2: one instance');
    const sx = await sessionOf(gw, 'pair', 'x');
    const ended = await adminCall<{ instance_deleted: boolean }>(gw, 'DELETE', `/_tether/sessions/${sx.id}`);
    assert.equal(ended.body.instance_deleted, false);
    assert.equal(pidOf(await hit(gw, 'pair', 'y')), pidOf(y));
    assert.ok(!isGone(pidOf(y)));
  });

  it('asks for ?service= when two services hold the id, and refuses bad or unknown ids', async (t) => {
    const gw = await startTestGateway(t, YAML, { adminToken: TOKEN });
    const one = await hit(gw, 'one', 'same');
    const pair = await hit(gw, 'pair', 'same');
    const { id } = await sessionOf(gw, 'one', 'same');
    const ambiguous = await adminCall<{ error: { code: string; message: string } }>(
      gw,
      'DELETE',
      `/_tether/sessions/${id}`,
    );
    assert.equal(ambiguous.status, 400);
    assert.equal(ambiguous.body.error.code, 'invalid_request');
    assert.match(ambiguous.body.error.message, /service: .*one, pair.*\?service=/);
    assert.equal((await adminCall(gw, 'DELETE', `/_tether/sessions/${id}?service=pair`)).status, 200);
    await waitFor('pair instance gone', () => isGone(pidOf(pair)));
    assert.ok(!isGone(pidOf(one)));
    for (const [path, status] of [
      [`/_tether/sessions/${id}?service=pair`, 404],
      ['/_tether/sessions/short', 400],
      ['/_tether/sessions/has.dots.in.it', 400],
      ['/_tether/sessions/AAAAAAAAAAAA', 404],
      ['/_tether/sessions', 405],
      ['/_tether/services', 405],
    ] as const) {
      const r = await adminCall<{ error: { code: string } }>(gw, 'DELETE', path);
      assert.equal(r.status, status, path);
    }
  });
});

describe('DELETE /_tether/instances/{name}', () => {
  it('deletes the instance and ends its sessions: their next request gets a new instance', async (t) => {
    const gw = await startTestGateway(t, YAML, { adminToken: TOKEN });
    const x = await hit(gw, 'pair', 'x');
    await hit(gw, 'pair', 'y');
    const other = await hit(gw, 'one', 'z');
    const instances = (await adminCall<AdminInstance[]>(gw, 'GET', '/_tether/instances')).body;
    const inst = instances.find((i) => i.pid === pidOf(x));
    assert.ok(inst);
    const ids = [(await sessionOf(gw, 'pair', 'x')).id, (await sessionOf(gw, 'pair', 'y')).id].sort();
    const r = await adminCall<{ name: string; service: string; ended_sessions: string[] }>(
      gw,
      'DELETE',
      `/_tether/instances/${inst.name}`,
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      { ...r.body, ended_sessions: r.body.ended_sessions.sort() },
      {
        name: inst.name,
        service: 'pair',
        ended_sessions: ids,
      },
    );
    await waitFor('instance gone', () => isGone(pidOf(x)));
    const sessions = (await adminCall<Session[]>(gw, 'GET', '/_tether/sessions')).body;
    assert.deepEqual(
      sessions.map((s) => s.service),
      ['one'],
    );
    const x2 = await hit(gw, 'pair', 'x');
    assert.equal(x2.status, 200);
    assert.notEqual(pidOf(x2), pidOf(x));
    assert.equal(pidOf(await hit(gw, 'one', 'z')), pidOf(other));
    assert.equal((await adminCall(gw, 'DELETE', `/_tether/instances/${inst.name}`)).status, 404);
    assert.equal((await adminCall(gw, 'DELETE', '/_tether/instances/Bad_Name')).status, 400);
  });
});

describe('tether sessions end / tether instances delete', () => {
  it('end a session and delete an instance by the ids the lists show; an unknown one exits 4', async (t) => {
    const gw = await startTestGateway(t, YAML, { adminToken: TOKEN });
    const env = { TETHER_GATEWAY_ADMIN_URL: gw.adminUrl, TETHER_GATEWAY_ADMIN_TOKEN: TOKEN };
    const a = await hit(gw, 'one', 'alice-1');
    const list = await runTether(['sessions'], env);
    const id = /^([\w-]{12}) +ali… /m.exec(list.stdout)?.[1];
    assert.ok(id, list.stdout);
    const ended = await runTether(['sessions', 'end', id], env);
    assert.equal(ended.code, 0, ended.stderr);
    assert.match(ended.stdout, new RegExp(`^id: +${id}$`, 'm'));
    assert.match(ended.stdout, /^instance_deleted: +true$/m);
    await waitFor('instance gone', () => isGone(pidOf(a)));
    const missing = await runTether(['sessions', 'end', id], env);
    assert.equal(missing.code, 4, missing.stderr);
    assert.match(missing.stderr, /404 not_found/);

    const b = await hit(gw, 'one', 'b');
    const [inst] = JSON.parse((await runTether(['instances', '--json', '--service', 'one'], env)).stdout) as Array<{
      name: string;
    }>;
    assert.ok(inst);
    const deleted = await runTether(['instances', 'delete', inst.name, '--json'], env);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.deepEqual(JSON.parse(deleted.stdout).name, inst.name);
    await waitFor('instance gone', () => isGone(pidOf(b)));
    assert.equal(pidOf(await hit(gw, 'one', 'b')) === pidOf(b), false, 'a new instance for b');
    const denied = await runTether(['instances', 'delete', inst.name, '--token', 'wrong'], env);
    assert.equal(denied.code, 3, denied.stderr);
  });
});

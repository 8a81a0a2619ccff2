import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { send, serviceYaml, startTestGateway } from '../gateway/helpers/harness.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';
import { runTether } from '../helpers/tether-cli.ts';

const tether = runTether;

let srv: TestMemoryServer;
let dir: string;
before(async () => {
  srv = await startTestMemoryServer();
  dir = await mkdtemp(join(tmpdir(), 'tether-cli-client-'));
});
after(async () => {
  await srv.close();
  await rm(dir, { recursive: true, force: true });
});

describe('tether keys', () => {
  it('mints (the secret printed once, --ttl in days), lists without secrets, revokes; the revoked key then exits 3', async () => {
    const env = { TETHER_URL: srv.url, TETHER_KEY: srv.adminKey };
    const asked = Date.now();
    const minted = await tether(['keys', 'mint', '--tenant', 'acme', '--agent', 'bot', '--ttl', '30d', '--json'], env);
    assert.equal(minted.code, 0, minted.stderr);
    const key = JSON.parse(minted.stdout) as { id: string; key: string; namespace: string; expires_at: string };
    assert.equal(key.namespace, 'acme:bot');
    const life = Date.parse(key.expires_at) - asked;
    const thirtyDays = 30 * 86_400_000;
    assert.ok(
      life >= thirtyDays - 1000 && life <= thirtyDays + 120_000,
      `expires ${key.expires_at}, ${life} ms after the mint`,
    );
    assert.match(key.key, /^tth_[0-9a-f]{16}_[0-9a-f]{64}$/);

    const list = await tether(['keys', 'list'], env);
    assert.equal(list.code, 0, list.stderr);
    const [header, ...rows] = list.stdout.trim().split('\n');
    assert.match(header as string, /^ID +TENANT +AGENT +CREATED +EXPIRES +REVOKED +NOTE$/);
    assert.ok(rows.some((r) => r.startsWith(key.id) && /acme +bot/.test(r)));
    assert.doesNotMatch(list.stdout, /tth_/);

    assert.equal((await tether(['recall', '--key', key.key], env)).code, 0);
    const revoked = await tether(['keys', 'revoke', key.id], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    const refused = await tether(['recall', '--key', key.key], env);
    assert.equal(refused.code, 3);
    assert.match(refused.stderr, /^tether: 401 key_revoked: /);
    const missing = await tether(['keys', 'revoke', '0123456789abcdef'], env);
    assert.equal(missing.code, 4);
    assert.match(missing.stderr, /404 not_found: key 0123456789abcdef/);
  });

  it('exits 2 on a usage error and 5 when nothing answers', async () => {
    const usage = await tether([
      'keys',
      'mint',
      '--tenant',
      'acme',
      '--ttl',
      'soon',
      '--key',
      srv.adminKey,
      '--url',
      srv.url,
    ]);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--ttl: /);
    assert.equal((await tether(['keys', 'list', '--bogus'])).code, 2);
    const down = await tether(['keys', 'list', '--url', 'http://127.0.0.1:9', '--key', srv.adminKey]);
    assert.equal(down.code, 5);
    assert.match(down.stderr, /cannot reach http:\/\/127\.0\.0\.1:9/);
  });

  it('reads the local admin key file when no key is given', async () => {
    const data = join(dir, 'up-data');
    await mkdir(join(data, 'memory'), { recursive: true });
    await writeFile(join(data, 'memory', 'admin.key'), `${srv.adminKey}\n`);
    const r = await tether(['keys', 'list', '--json'], { TETHER_URL: srv.url, TETHER_DATA: data });
    assert.equal(r.code, 0, r.stderr);
    assert.ok((JSON.parse(r.stdout) as { keys: unknown[] }).keys.length >= 1);
    const none = await tether(['keys', 'list'], { TETHER_URL: srv.url, TETHER_DATA: join(dir, 'nowhere') });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /no key: give --key, set TETHER_KEY/);
  });
});

describe('tether remember / recall / search / history / forget', () => {
  it('works a fact through its life, with the value typed by the registry and as_of reads', async () => {
    const key = await srv.agentKey('agents', 'cli-facts');
    const env = { TETHER_URL: srv.url, TETHER_KEY: key };
    const first = await tether(
      ['remember', 'user', 'favorite_color', 'blue', '--observed-at', '2026-01-01T00:00:00Z'],
      env,
    );
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^stored: +true$/m);
    const second = await tether(['remember', 'user', 'favorite_color', 'green', '--evidence', 'said so'], env);
    assert.match(second.stdout, /^superseded: +blue$/m);

    const now = await tether(['recall', 'user', 'favorite_color'], env);
    assert.match(now.stdout, /^user +favorite_color +green +\S+ +blue$/m);
    const then = await tether(['recall', 'user', '--as-of', '2026-06-01T00:00:00Z', '--json'], env);
    assert.equal((JSON.parse(then.stdout) as { beliefs: { value: string }[] }).beliefs[0]?.value, 'blue');
    const found = await tether(['search', 'green'], env);
    assert.match(found.stdout, /favorite_color +green/);

    const history = await tether(['history', 'user', 'favorite_color'], env);
    const lines = history.stdout.trim().split('\n');
    assert.equal(lines.length, 3, history.stdout);
    assert.match(lines[1] as string, /^2026-01-01T00:00:00\.000Z +asserted +blue +cli-facts/);
    assert.match(lines[2] as string, /asserted +green .* said so$/);

    const forgot = await tether(['forget', 'user', 'favorite_color', 'green'], env);
    assert.match(forgot.stdout, /^withdrawn: +1$/m);
    assert.match((await tether(['recall', 'user'], env)).stdout, /^\(no beliefs\)$/m);

    const bad = await tether(['remember', 'user', 'no_such_predicate', 'x'], env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^tether: 400 invalid_request: predicate: unknown predicate 'no_such_predicate'/);
    const other = await tether(['recall', '--namespace', 'agents:someone-else'], env);
    assert.equal(other.code, 3);
    assert.match(other.stderr, /403 namespace_mismatch/);
  });
});

describe('tether sessions / instances / logs', () => {
  it('lists sessions by a prefix of their key, instances, and an instance’s output; a wrong token exits 3', async (t) => {
    const gw = await startTestGateway(
      t,
      serviceYaml('cli-app', { 'serving.knative.dev/session-affinity-cookie': 'app' }),
      { adminToken: 'secret-admin-token' },
    );
    const r = await send(gw.publicUrl, {
      host: 'cli-app.default.example.com',
      headers: { cookie: 'app=s3cret-session' },
    });
    assert.equal(r.status, 200);
    const env = { TETHER_GATEWAY_ADMIN_URL: gw.adminUrl, TETHER_GATEWAY_ADMIN_TOKEN: 'secret-admin-token' };
    const sessions = await tether(['sessions'], env);
    assert.equal(sessions.code, 0, sessions.stderr);
    assert.match(
      sessions.stdout,
      /^ID +SESSION +SERVICE +INSTANCE +AGENT +STATE +LAST ACTIVE +IDLE DEADLINE +EXPIRES$/m,
    );
    assert.match(sessions.stdout, /^[\w-]{12} +s3cret-… +cli-app +cli-app-\S+ +cli-app-\S+ +idle +\S+ +\S+ +never$/m);
    assert.doesNotMatch(sessions.stdout, /s3cret-session/);
    const revealed = await tether(['sessions', '--reveal-keys'], env);
    assert.match(revealed.stdout, /^[\w-]{12} +s3cret-session +cli-app /m);
    const json = JSON.parse((await tether(['sessions', '--json', '--reveal-keys'], env)).stdout) as { key: string }[];
    assert.deepEqual(
      json.map((s) => s.key),
      ['s3cret-session'],
    );

    const instances = await tether(['instances', '--json'], env);
    const [instance] = JSON.parse(instances.stdout) as { name: string; state: string }[];
    assert.ok(instance);
    const table = await tether(['instances'], env);
    assert.match(table.stdout, new RegExp(`^${instance.name} +cli-app +running +\\d+ +bound`, 'm'));
    const logs = await tether(['logs', instance.name], env);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /^\S+ (OUT|ERR) /m);
    assert.equal((await tether(['logs', 'no-such-instance'], env)).code, 4);

    const denied = await tether(['sessions', '--token', 'wrong'], env);
    assert.equal(denied.code, 3);
    assert.match(denied.stderr, /401 unauthenticated: the admin API needs/);
  });
});

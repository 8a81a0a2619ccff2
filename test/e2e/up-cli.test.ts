import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type AdminInstance, isGone, send, waitFor } from '../gateway/helpers/harness.ts';
import { spawnTether } from '../helpers/tether-cli.ts';

describe('tether up (process)', () => {
  it('serves the example services with a memory agent, and on SIGTERM leaves no instance behind', async (t) => {
    const data = await mkdtemp(join(tmpdir(), 'tether-up-cli-'));
    t.after(() => rm(data, { recursive: true, force: true }));
    const child = spawnTether(['up', '--data', data, '--memory-port', '0', '--port', '0', '--admin-port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.after(() => child.kill('SIGKILL'));
    let out = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      out += c.toString();
    });
    // Generous: a start under load is slow, and the start is not what is tested.
    await waitFor('the "Tether is up." banner', () => out.includes('Tether is up.'), { timeoutMs: 120_000 });
    const gateway = /session gateway (http:\/\/\S+)\s+admin (http:\/\/\S+)\/_tether/.exec(out);
    const memory = /memory server\s+(http:\/\/\S+)/.exec(out);
    assert.ok(gateway && memory, out);
    const [, publicUrl, adminUrl] = gateway as RegExpExecArray;
    // --isolation auto, the default of tether up: on a machine with bubblewrap and root, namespaces.
    assert.match(out, /isolation {7}namespaces\n/, out);

    const r = await send(publicUrl as string, {
      host: 'memory-agent.default.example.com',
      headers: { cookie: 'agent=carol' },
    });
    assert.equal(r.status, 200, r.body);
    const turn = JSON.parse(r.body) as { agent: string; namespace: string };
    assert.equal(turn.namespace, `default:${turn.agent}`);
    const health = await fetch(`${memory?.[1]}/readyz`);
    assert.equal(health.status, 200);

    // The admin API is never open: the token is in <data>/gateway/admin.token (0600), its path printed, never itself.
    const tokenFile = join(data, 'gateway', 'admin.token');
    assert.ok(out.includes(`admin token: ${tokenFile}`), out);
    assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
    const token = readFileSync(tokenFile, 'utf8').trim();
    assert.ok(token.length >= 32);
    assert.ok(!out.includes(token), 'the token is never printed or logged');
    assert.equal((await send(adminUrl as string, { path: '/_tether/instances' })).status, 401);
    const instances = JSON.parse(
      (await send(adminUrl as string, { path: '/_tether/instances', headers: { authorization: `Bearer ${token}` } }))
        .body,
    ) as AdminInstance[];
    const pids = instances.map((i) => i.pid).filter((p): p is number => p !== null);
    assert.ok(pids.length >= 2, 'the warm pools and the agent run');
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    assert.equal(code, 0, out.slice(-2000));
    for (const pid of pids) assert.ok(isGone(pid), `instance pid ${pid} left behind`);
    const fence = /"table":"inet (tether_\d+_\d+)"/.exec(out)?.[1];
    assert.ok(fence, 'the fence table is logged');
    const tables = execFileSync('nft', ['list', 'tables'], { encoding: 'utf8' });
    assert.ok(!tables.includes(fence), `${fence} left behind`);
  });
});

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ask, isolatedRuntime, openTempDir, ourNetworks, probeSpec } from './helpers.ts';

/** The host-side address of the /30 whose instance side is `ip`. */
function hostSideOf(ip: string): string {
  const parts = ip.split('.').map(Number);
  return [...parts.slice(0, 3), (parts[3] ?? 0) - 1].join('.');
}

/** The interface holding `ip` on this machine, if any. */
function interfaceWith(ip: string): string | undefined {
  const addrs = JSON.parse(execFileSync('ip', ['-j', '-4', 'addr', 'show'], { encoding: 'utf8' })) as Array<{
    ifname: string;
    addr_info: Array<{ local: string }>;
  }>;
  return addrs.find((a) => a.addr_info.some((i) => i.local === ip))?.ifname;
}

type Read = { ok: boolean; error?: string; bytes?: number };

describe('an isolated instance (--isolation namespaces), seen from inside', () => {
  it('sees only its own processes, PID 1 its own, its name as hostname, and runs as an unprivileged uid', async (t) => {
    const rt = await isolatedRuntime(t);
    const spec = probeSpec();
    const inst = await rt.start(spec);
    const me = await ask<{ pid: number; uid: number; hostname: string }>(inst, '/whoami');
    assert.equal(me.hostname, spec.name);
    assert.ok(me.uid >= 100_000, `uid ${me.uid} is not an unprivileged one of its own`);
    assert.notEqual(me.uid, process.getuid?.());
    const { procs } = await ask<{ procs: Array<{ pid: number; cmd: string }> }>(inst, '/procs');
    assert.deepEqual(
      procs.map((p) => p.pid),
      [1, me.pid],
      `expected only the sandbox's init and the app: ${JSON.stringify(procs)}`,
    );
    assert.match(procs[0]?.cmd ?? '', /bwrap$/);
    assert.ok(me.pid < 10, 'pid numbers are those of its own PID namespace');
  });

  it('reads the system and its workingDir, writes only its work folder (kept across a pause) and a private /tmp', async (t) => {
    const rt = await isolatedRuntime(t);
    const spec = probeSpec();
    const inst = await rt.start(spec);
    assert.equal((await ask<Read>(inst, '/read?path=/etc/passwd')).ok, true);
    assert.equal(
      (await ask<Read>(inst, `/read?path=${encodeURIComponent(`${spec.workingDir}/probe-app.mjs`)}`)).ok,
      true,
    );
    const roots = await ask<{ entries: string[] }>(inst, '/list?path=/');
    assert.ok(!roots.entries.includes('root') && !roots.entries.includes('home'), roots.entries.join(' '));
    const inWork = await ask<{ ok: boolean; error?: string }>(
      inst,
      `/write?path=${encodeURIComponent(`${spec.workingDir}/x`)}`,
    );
    assert.deepEqual(inWork, { ok: false, error: 'EROFS' });
    assert.deepEqual(await ask(inst, '/write?path=/workspace/notes&text=kept'), { ok: true, back: 'kept' });
    assert.deepEqual(await ask(inst, '/write?path=/tmp/scratch&text=mine'), { ok: true, back: 'mine' });
    assert.equal(existsSync('/tmp/scratch'), false, 'its /tmp is not the host one');
    await rt.pause(spec.name);
    await rt.resume(spec.name);
    assert.equal((await ask<Read>(inst, '/read?path=/workspace/notes')).bytes, 4);
  });

  it('cannot see the hidden folders inside a folder it reads, nor another instance’s token; reads its own read-only', async (t) => {
    const root = await openTempDir(t, 'tether-view-');
    const data = join(root, 'data');
    mkdirSync(join(data, 'memory'), { recursive: true });
    writeFileSync(join(data, 'memory', 'admin.key'), 'tth_admin');
    writeFileSync(join(data, 'memory', 'tether.db'), 'db');
    mkdirSync(join(data, 'authority'));
    writeFileSync(join(data, 'authority', 'kubeconfig'), 'kubeconfig');
    writeFileSync(join(root, 'visible.txt'), 'visible');
    const tokens = (name: string) => {
      mkdirSync(join(data, 'instances', name), { recursive: true, mode: 0o700 });
      writeFileSync(join(data, 'instances', name, 'token'), `token-of-${name}`, { mode: 0o600 });
      return join(data, 'instances', name, 'token');
    };
    const rt = await isolatedRuntime(t, { hidden: [data] });
    const a = probeSpec({ workingDir: root, argv: ['node', probeSpec().argv[1] as string] });
    const b = probeSpec({ workingDir: root, argv: a.argv });
    const instA = await rt.start({ ...a, tokenFile: tokens(a.name) });
    await rt.start({ ...b, tokenFile: tokens(b.name) });
    const read = async (p: string) => ask<Read>(instA, `/read?path=${encodeURIComponent(p)}`);

    assert.equal((await read(join(root, 'visible.txt'))).ok, true, 'the folder itself is visible');
    for (const hidden of [
      'memory/admin.key',
      'memory/tether.db',
      'authority/kubeconfig',
      `instances/${b.name}/token`,
    ]) {
      assert.deepEqual(await read(join(data, hidden)), { ok: false, error: 'ENOENT' }, hidden);
    }
    const me = await ask<{ env: { TETHER_TOKEN_FILE: string } }>(instA, '/whoami');
    assert.equal(me.env.TETHER_TOKEN_FILE, '/var/run/secrets/tether/token');
    assert.equal((await read(me.env.TETHER_TOKEN_FILE)).bytes, `token-of-${a.name}`.length);
    const overwrite = await ask(instA, `/write?path=${encodeURIComponent(me.env.TETHER_TOKEN_FILE)}`);
    assert.equal((overwrite as { ok: boolean }).ok, false);

    // A rotated token (written then renamed into place, as the identity runtime does) shows up inside.
    writeFileSync(join(data, 'instances', a.name, 'token.tmp'), 'rotated-token');
    renameSync(join(data, 'instances', a.name, 'token.tmp'), join(data, 'instances', a.name, 'token'));
    for (let i = 0; i < 100 && (await read(me.env.TETHER_TOKEN_FILE)).bytes !== 'rotated-token'.length; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal((await read(me.env.TETHER_TOKEN_FILE)).bytes, 'rotated-token'.length);
  });

  it('removes its network with the instance', async (t) => {
    const rt = await isolatedRuntime(t);
    const spec = probeSpec();
    const inst = await rt.start(spec);
    const hostSide = interfaceWith(hostSideOf(inst.host));
    assert.match(hostSide ?? '', /^tth[0-9a-f]{4}h$/);
    assert.ok(ourNetworks().includes((hostSide ?? '').slice(0, -1)));
    await rt.delete(spec.name);
    assert.equal(interfaceWith(hostSideOf(inst.host)), undefined);
    assert.ok(!ourNetworks().includes((hostSide ?? '').slice(0, -1)));
  });
});

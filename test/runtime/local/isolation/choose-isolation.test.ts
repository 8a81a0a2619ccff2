import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../../../src/common/log.ts';
import {
  createIsolation,
  decideIsolation,
  parseIsolationMode,
} from '../../../../src/runtime/local/isolation/choose-isolation.ts';
import type { HostCapabilities } from '../../../../src/runtime/local/isolation/host-probe.ts';

const full: HostCapabilities = {
  tools: { bwrap: '/b', nsenter: '/n', setpriv: '/s', ip: '/i', nft: '/f', sh: '/sh' },
  root: true,
  userNamespaces: true,
  cgroups: {
    freezer: { kind: 'v1', dir: '/c/f' },
    memory: { kind: 'v1', dir: '/c/m' },
    pids: { kind: 'v1', dir: '/c/p' },
    cpu: { kind: 'v1', dir: '/c/c' },
  },
  forwarding: false,
};

describe('decideIsolation()', () => {
  it('gives all of it on a machine with root, the tools and cgroups', () => {
    const d = decideIsolation('auto', full, 'the default of tether up');
    assert.deepEqual(
      { mode: d.mode, lost: d.lost, network: d.network, ownUid: d.ownUid },
      { mode: 'namespaces', lost: [], network: true, ownUid: true },
    );
    assert.match(d.reason, /auto \(the default of tether up\)/);
  });

  it('auto falls back to plain processes without bubblewrap or user namespaces; namespaces refuses', () => {
    const noBwrap = { ...full, tools: { ...full.tools, bwrap: undefined } };
    assert.equal(decideIsolation('auto', noBwrap, 'x').mode, 'none');
    assert.match(decideIsolation('auto', noBwrap, 'x').reason, /bubblewrap/);
    assert.throws(() => decideIsolation('namespaces', noBwrap, 'x'), /impossible here: bubblewrap/);
    const noUserns = { ...full, root: false, userNamespaces: false };
    assert.equal(decideIsolation('auto', noUserns, 'x').mode, 'none');
    assert.throws(() => decideIsolation('namespaces', noUserns, 'x'), /user namespaces/);
  });

  it('without root keeps the namespaces and names what is lost: network fence, own uid, cgroups', () => {
    const d = decideIsolation('auto', { ...full, root: false, cgroups: undefined }, 'x');
    assert.equal(d.mode, 'namespaces');
    assert.equal(d.network, false);
    assert.equal(d.ownUid, false);
    assert.match(d.lost.join('; '), /network namespace and fence \(needs root\)/);
    assert.match(d.lost.join('; '), /freezer \(pause falls back to SIGSTOP\)/);
    assert.match(d.lost.join('; '), /memory limit/);
  });

  it('names the missing tool when root lacks nftables', () => {
    const d = decideIsolation('namespaces', { ...full, tools: { ...full.tools, nft: undefined } }, 'x');
    assert.match(d.lost.join('; '), /missing: nft/);
  });

  it('none is none, whatever the machine', () => {
    assert.equal(decideIsolation('none', full, 'the default of tether gateway').mode, 'none');
  });
});

describe('parseIsolationMode()', () => {
  it('accepts the three modes and names the flag otherwise', () => {
    assert.equal(parseIsolationMode('auto'), 'auto');
    assert.throws(
      () => parseIsolationMode('docker'),
      /--isolation must be one of auto, namespaces, none: got 'docker'/,
    );
  });
});

describe('createIsolation()', () => {
  it('auto on a machine that cannot isolate: plain processes, and one warning that says what is exposed', async () => {
    const lines: Array<{ level: number; msg: string; reason?: string }> = [];
    const log = createLogger({ format: 'json', destination: { write: (l: string) => lines.push(JSON.parse(l)) } });
    const caps = { ...full, root: false, userNamespaces: false, cgroups: undefined };
    const isolation = await createIsolation({
      requested: 'auto',
      why: 'the default of tether up',
      hidden: [],
      dir: '/nonexistent',
      log,
      caps,
    });
    assert.equal(isolation, undefined);
    assert.equal(lines.length, 1, JSON.stringify(lines));
    const [line] = lines;
    assert.equal(line?.level, 40, 'a warning');
    assert.match(line?.msg ?? '', /^isolation: none — instances run as plain processes/);
    assert.match(line?.msg ?? '', /data folder, admin key, authority files, other instances' tokens/);
    assert.match(line?.msg ?? '', /every local port/);
    assert.match(line?.reason ?? '', /no user namespaces/);
  });

  it('namespaces on such a machine refuses to start, naming what is missing', async () => {
    const caps = { ...full, tools: { ...full.tools, bwrap: undefined } };
    await assert.rejects(
      createIsolation({ requested: 'namespaces', why: 'asked for', hidden: [], dir: '/x', log: createLogger(), caps }),
      /--isolation namespaces is impossible here: bubblewrap \(bwrap\) is not installed/,
    );
  });
});

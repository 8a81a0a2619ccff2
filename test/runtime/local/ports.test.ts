/**
 * Ports of starting instances. The OS frees a picked port at once and may offer it again before the first app
 * listens on it; two instances given one port share it: one app fails to listen, and the other instance's
 * readiness probe (a connect) is answered by the first app, so its session would be served by another session's
 * process. This is how two gateways on one Redis in one process (test/gateway/redis/two-gateways.test.ts) once
 * answered one new session from two instances: the winner of the bind was "ready" on the other app's port, its own
 * app died, its binding ended with it, and the other gateway bound the session again on an instance of its own.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { silentLogger } from '../../../src/common/log.ts';
import { LocalRuntime } from '../../../src/runtime/local/local-runtime.ts';
import { pickFreePort } from '../../../src/runtime/local/readiness.ts';
import type { InstanceSpec } from '../../../src/runtime/runtime.ts';
import { APP } from '../../gateway/helpers/harness.ts';

function spec(name: string): InstanceSpec {
  return {
    name,
    service: 'svc',
    configuration: 'svc',
    revision: 'svc-00001',
    argv: ['node', APP],
    env: {},
    workingDir: resolve(import.meta.dirname),
    startTimeoutMs: 10_000,
  };
}

/** The pid of the process answering on `port` (the example app says it at /env). */
function pidOn(port: number): Promise<number> {
  return new Promise((ok, fail) => {
    request({ host: '127.0.0.1', port, path: '/env', agent: false }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => ok((JSON.parse(body) as { pid: number }).pid));
    })
      .on('error', fail)
      .end();
  });
}

describe('LocalRuntime ports', () => {
  it('two instances starting at once in one process never share a port, even when the OS offers one twice', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'tether-ports-'));
    const same = await pickFreePort();
    let offers = 0;
    // The OS's pick, as it may happen: the same free port for the first two starts, then any.
    const pickPort = () => (++offers <= 2 ? Promise.resolve(same) : pickFreePort());
    // Two runtimes, as two gateways in one process have.
    const runtimes = [0, 1].map(
      () => new LocalRuntime({ log: silentLogger(), graceMs: 1000, stateDir: dir, pickPort }),
    );
    t.after(async () => {
      await Promise.all(runtimes.map((rt) => rt.close()));
      await rm(dir, { recursive: true, force: true });
    });
    const started = await Promise.all(runtimes.map((rt, i) => rt.start(spec(`svc-port${i}`))));
    for (const s of started) assert.equal(await pidOn(s.port), s.pid, `${s.name} answers from its own process`);
    assert.notEqual(started[0]?.port, started[1]?.port);
    assert.equal(offers, 3, 'the second start was offered the leased port, then another');
  });
});

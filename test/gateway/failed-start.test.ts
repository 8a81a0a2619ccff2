import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger } from '../../src/common/log.ts';
import { outputTail } from '../../src/gateway/instance-pool.ts';
import { send, startTestGateway, waitFor } from './helpers/harness.ts';

/** A service whose app dies at start the way a manifest copied out of examples/ does. */
const BROKEN = `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: broken
spec:
  template:
    metadata:
      annotations:
        serving.knative.dev/workload-type: "sandbox"
        serving.knative.dev/session-affinity-cookie: "app"
    spec:
      containers:
        - command: ["node", "-e", "console.log('starting'); console.error('Error: Cannot find module /nope/server.mjs'); console.error('  code: MODULE_NOT_FOUND'); process.exit(1)"]
`;

/** A logger whose JSON lines are kept in `lines`. */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger({ level: 'info', destination }), lines };
}

describe('an instance that fails to start', () => {
  it("logs the last lines of its stderr in the gateway's log, and the 503 names the admin logs route", async (t) => {
    const { log, lines } = capturingLogger();
    const gw = await startTestGateway(t, BROKEN, { log });
    const r = await send(gw.publicUrl, { host: 'broken.default.example.com', headers: { cookie: 'app=1' } });
    assert.equal(r.status, 503);
    const { message } = (JSON.parse(r.body) as { error: { message: string } }).error;
    const route = /GET (\/_tether\/instances\/(broken-[a-z0-9]{5})\/logs) on the gateway admin port/.exec(message);
    assert.ok(route, message);
    assert.doesNotMatch(r.body, /Cannot find module/, 'the output goes to the operator, not the client');
    const failed = await waitFor('the failed start logged', () =>
      lines.find((l) => l.msg === 'instance did not start'),
    );
    assert.equal(failed.instance, route[2]);
    assert.match(String(failed.err), /exited before it was ready \(code 1/);
    assert.deepEqual(failed.stderr, ['Error: Cannot find module /nope/server.mjs', '  code: MODULE_NOT_FOUND']);
    const logs = JSON.parse((await send(gw.adminUrl, { path: route[1] as string })).body) as Array<{ line: string }>;
    assert.deepEqual(
      logs.map((l) => l.line),
      ['starting', 'Error: Cannot find module /nope/server.mjs', '  code: MODULE_NOT_FOUND'],
    );
  });
});

describe('outputTail()', () => {
  const line = (stream: 'stdout' | 'stderr', text: string) => ({ time: '', stream, line: text });

  it('keeps the last 10 stderr lines, cut to 300 characters, or the last lines of any stream without stderr', () => {
    const many = Array.from({ length: 15 }, (_, i) => line('stderr', `e${i}`));
    assert.deepEqual(
      outputTail([line('stdout', 'o'), ...many]),
      many.slice(-10).map((l) => l.line),
    );
    assert.deepEqual(outputTail([line('stdout', 'only stdout')]), ['only stdout']);
    assert.equal(outputTail([line('stderr', 'x'.repeat(1000))])[0]?.length, 300);
    assert.deepEqual(outputTail(undefined), []);
  });
});

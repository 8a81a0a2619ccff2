/**
 * Event-loop lag is visible (issue 21, point 4): /metrics has the loop-delay histogram, and a
 * request that holds the loop past 100 ms is named in a warning (a test-only slow route busy-waits).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { openSqlite } from '../../src/cli/drivers.ts';
import { createLogger } from '../../src/common/log.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { startMemoryServer } from '../../src/server/standalone.ts';

/** A JSON logger whose lines are kept in `lines`. */
function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: createLogger({ destination, format: 'json', level: 'info' }), lines };
}

async function started(t: import('node:test').TestContext) {
  const dir = mkdtempSync(join(tmpdir(), 'tether-loop-'));
  const { log, lines } = capturingLogger();
  const running = await startMemoryServer({
    ...openSqlite(dir),
    port: 0,
    dataDir: dir,
    defaultRegistry: starterRegistry('personal'),
    log,
    plugins: [
      async (app) => {
        app.get('/test/slow', { config: { public: true } }, async () => {
          const until = Date.now() + 250;
          while (Date.now() < until) {} // holds the loop, as a heavy fold on it would
          return { ok: true };
        });
      },
    ],
  });
  t.after(async () => {
    await running.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { app: running.server.app, watch: running.server.loopWatch, lines };
}

describe('event-loop lag', () => {
  it('shows the loop-delay histogram on /metrics', async (t) => {
    const { app } = await started(t);
    const r = await app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(r.statusCode, 200);
    assert.match(r.body, /^# TYPE tether_event_loop_delay_seconds histogram$/m);
    assert.match(r.body, /^tether_event_loop_delay_seconds_bucket\{le="0.1"\} \d+$/m);
  });

  it('logs a warning naming the route of a request that held the loop over 100 ms', async (t) => {
    const { app, lines } = await started(t);
    const r = await app.inject({ method: 'GET', url: '/test/slow' });
    assert.equal(r.statusCode, 200);
    // The sampler finds the gap at its next turn: wait for the line (generous deadline, no race).
    const named = () => lines.find((l) => (l.routes as string[] | undefined)?.includes('GET /test/slow'));
    for (let waited = 0; !named() && waited < 60_000; waited += 20) await sleep(20);
    const line = named();
    assert.ok(line, `a warning naming GET /test/slow; got ${JSON.stringify(lines)}`);
    assert.equal(line.level, 40);
    assert.ok((line.held_ms as number) > 100, `held_ms ${line.held_ms}`);
    assert.match(String(line.msg), /GET \/test\/slow/);
  });
});

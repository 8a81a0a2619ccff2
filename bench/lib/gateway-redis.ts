/**
 * @module
 * `npm run bench:gateway -- --session-store redis`: Redis session mode against memory mode, side by side in one
 * run on one machine (a redis-server started here on a free port, data in a temp folder): proxy throughput and
 * p50/p99 (wrk, interleaved rounds, medians), new session from the warm pool to first byte (p50/p99), and the
 * time from start to serving again with 1,000 recorded sessions (in-process restart: the first gateway detaches
 * its instances, the second adopts them; a `tether gateway` process adds its own Node start to that).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../src/common/log.ts';
import { type Gateway, type GatewayOptions, startGateway } from '../../src/gateway/gateway.ts';
import { RedisSessionStore } from '../../src/sessions/redis/redis-store.ts';
import { parseRedisUrl } from '../../src/sessions/redis/redis-url.ts';
import { killRecorded } from '../../test/gateway/redis/helpers.ts';
import { startRedis } from '../../test/helpers/redis.ts';
import { firstByte, fmt, instances, type Load, load, pct, service, until } from './gateway-load.ts';
import { which } from './which.ts';

const CONNECTIONS = 16;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 30);
const RECORDED = 1000;

/** Runs the comparison and prints it. */
export async function compareRedis(): Promise<void> {
  const cleanups: Array<() => Promise<void>> = [];
  const dir = await mkdtemp(join(tmpdir(), 'tether-bench-redis-'));
  try {
    const redis = await startRedis({ after: (fn) => cleanups.push(fn) });
    const file = join(dir, 'services.yaml');
    await writeFile(
      file,
      [
        service('bench', { 'serving.knative.dev/session-timeout': '30m' }),
        service('warm', { 'serving.knative.dev/warm-pool': '3', 'serving.knative.dev/session-timeout': '100ms' }),
        service('many', {
          'autoscaling.knative.dev/metric': 'session',
          'autoscaling.knative.dev/target': '250',
          'serving.knative.dev/session-timeout': '1h',
        }),
      ].join('---\n'),
    );
    const base: GatewayOptions = {
      services: file,
      port: 0,
      adminPort: 0,
      host: '127.0.0.1',
      log: silentLogger(),
      reconcileIntervalMs: 20,
      graceMs: 1000,
      newSessionsPerMinute: 0,
    };
    const redisStore = (prefix: string) =>
      new RedisSessionStore({ target: parseRedisUrl(redis.url), prefix, log: silentLogger() });
    const memStateDir = join(dir, 'state-memory');
    const redisStateDir = join(dir, 'state-redis');
    const memory = await startGateway({ ...base, stateDir: memStateDir });
    const first = await startGateway({
      ...base,
      stateDir: redisStateDir,
      sessionStore: redisStore('bench:'),
      gatewayId: 'bench-redis',
    });
    let redisGw: Gateway | undefined = first;
    cleanups.push(() => memory.close());
    cleanups.push(async () => {
      await redisGw?.close();
      await killRecorded(redisStateDir);
    });
    const wrk = which('wrk', ['/usr/bin/wrk']);
    console.log(
      `tether gateway bench: Redis session mode vs memory mode — load by ${wrk ? 'wrk' : 'node:http driver'}, ${CONNECTIONS} connections`,
    );
    const headers = { Host: 'bench.default.example.com', Cookie: 's=bench' };
    const gws: Array<[string, Gateway]> = [
      ['memory', memory],
      ['redis', first],
    ];
    for (const [, g] of gws) await load(wrk, `${g.publicUrl}/`, headers, CONNECTIONS, 1); // warm-up
    const runs = new Map<string, Load[]>(gws.map(([n]) => [n, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [n, g] of gws) runs.get(n)?.push(await load(wrk, `${g.publicUrl}/`, headers, CONNECTIONS));
    }
    const med = new Map<string, Load>();
    for (const [n, list] of runs) {
      list.sort((a, b) => a.rps - b.rps);
      med.set(n, list[Math.floor((list.length - 1) / 2)] as Load);
    }
    console.log(`\nthroughput, ${CONNECTIONS} connections, one session (median of ${ROUNDS} interleaved rounds)`);
    console.log('  store      req/s      p50 ms   p99 ms');
    for (const [n, l] of med) {
      console.log(
        `  ${n.padEnd(8)} ${fmt(l.rps, 0).padStart(8)}   ${fmt(l.p50, 3).padStart(7)}  ${fmt(l.p99, 3).padStart(7)}`,
      );
    }
    const m = med.get('memory') as Load;
    const r = med.get('redis') as Load;
    console.log(`  redis/memory throughput: ${fmt(r.rps / m.rps)}x`);

    // New session from the warm pool, alternating the two gateways.
    const warm = new Map<string, number[]>(gws.map(([n]) => [n, []]));
    for (let i = 0; i < SAMPLES; i++) {
      for (const [n, g] of gws) {
        await until('warm pool full', async () => {
          const list = (await instances(g)).filter((x) => x.service === 'warm');
          return list.length === 3 && list.every((x) => x.warm && x.state === 'paused');
        });
        const res = await firstByte(`${g.publicUrl}/`, { host: 'warm.default.example.com', cookie: `s=w${n}${i}` });
        if (res.status !== 200) throw new Error(`warm claim answered ${res.status}`);
        warm.get(n)?.push(res.ms);
      }
    }
    console.log(`\nnew session from the warm pool to first byte (${SAMPLES} samples each)`);
    for (const [n, list] of warm) {
      list.sort((a, b) => a - b);
      console.log(`  ${n.padEnd(8)} p50 ${fmt(pct(list, 50), 3)} ms  p99 ${fmt(pct(list, 99), 3)} ms`);
    }

    // Restart to serving with 1,000 recorded sessions.
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: RECORDED }, (_, i) =>
        firstByte(`${first.publicUrl}/`, { host: 'many.default.example.com', cookie: `s=m${i}` }),
      ),
    );
    const bindMs = performance.now() - t0;
    const pidBefore = (await firstByte(`${redisGw.publicUrl}/`, { host: 'many.default.example.com', cookie: 's=m7' }))
      .pid;
    await redisGw.close(); // detaches: the instances stay for the next gateway
    redisGw = undefined;
    const t1 = performance.now();
    const second = await startGateway({
      ...base,
      stateDir: redisStateDir,
      sessionStore: redisStore('bench:'),
      gatewayId: 'bench-redis',
    });
    redisGw = second;
    const again = await firstByte(`${second.publicUrl}/`, { host: 'many.default.example.com', cookie: 's=m7' });
    const restartMs = performance.now() - t1;
    if (again.status !== 200 || again.pid !== pidBefore)
      throw new Error('restart: the session did not reach its process');
    console.log(`\nrestart to serving with ${RECORDED} recorded sessions (4 instances, bound in ${fmt(bindMs, 0)} ms)`);
    console.log(`  start + adopt + first request of an old session: ${fmt(restartMs, 1)} ms (same pid)`);
    const w = warm.get('redis') as number[];
    console.log(
      `\ntargets: redis/memory throughput >= 0.9x (${fmt(r.rps / m.rps)}x), redis warm p99 <= 50 ms (${fmt(pct(w, 99), 3)}),` +
        ` restart to serving <= 2000 ms (${fmt(restartMs, 1)})`,
    );
  } finally {
    for (const fn of cleanups.reverse()) await fn().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

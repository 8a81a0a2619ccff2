/**
 * @module
 * `npm run bench:auth`: (1) workload-token exchange latency p50/p99 against the Kubernetes API double
 * (TokenReview + pod + sandbox + claim over HTTPS, then a key minted); (2) the cost of key
 * verification: an authenticated recall against the same recall with verification bypassed
 * in-process, both servers in this process on one store, measured in alternating rounds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { AuthContext } from '../src/auth/auth-context.ts';
import { KeyService } from '../src/auth/key-service.ts';
import { openSqlite } from '../src/cli/drivers.ts';
import { kubernetesPlugins } from '../src/cli/kubernetes-option.ts';
import { systemClock } from '../src/common/clock.ts';
import { silentLogger } from '../src/common/log.ts';
import { starterRegistry } from '../src/memory/registry.ts';
import { createMemoryServer } from '../src/server/app.ts';
import { startMemoryServer } from '../src/server/standalone.ts';
import { kubeFlags } from '../test/helpers/kube-flags.ts';
import { startKubeDouble } from '../test/kube/double.ts';
import { runLoad } from './lib/http-load.ts';
import { fmt, median, summarize, table } from './lib/stats.ts';

const EXCHANGES = Number(process.env.BENCH_EXCHANGES ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const PER_ROUND = Number(process.env.BENCH_PER_ROUND ?? 3000);
const INJECTS = Number(process.env.BENCH_INJECTS ?? 3000);

const dir = mkdtempSync(join(tmpdir(), 'tether-bench-auth-'));
const kube = await startKubeDouble();
const log = silentLogger();
const flags = kubeFlags(kube.kubeconfigPath, { kubernetesTimeout: '5s' });
const main = await startMemoryServer({
  ...openSqlite(dir),
  port: 0,
  dataDir: dir,
  defaultRegistry: starterRegistry('personal'),
  log,
  plugins: kubernetesPlugins(flags, log),
  limits: { perKeyPerSecond: 0 }, // a bench's load on one key, not an agent's
});

try {
  // (1) exchange latency: pods take turns so the per-pod rate limit never applies
  const pods = Array.from({ length: 10 }, (_, i) => kube.createClaim(`bench-${i}`));
  const tokens = pods.map((p) => kube.issueToken(p));
  const exchangeMs: number[] = [];
  let agentKey = '';
  for (let i = 0; i < EXCHANGES; i++) {
    const t0 = performance.now();
    const res = await fetch(`${main.url}/v1/auth/kubernetes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: tokens[i % tokens.length] }),
    });
    const body = (await res.json()) as { key: string };
    exchangeMs.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`exchange failed: ${JSON.stringify(body)}`);
    if (i === 0) agentKey = body.key;
  }
  const ex = summarize(exchangeMs.slice(10));

  // (2) verification cost: same store, same routes; one server verifies keys, the other trusts a fixed context
  const me = (await (
    await fetch(`${main.url}/v1/whoami`, { headers: { authorization: `Bearer ${agentKey}` } })
  ).json()) as {
    key_id: string;
    tenant: string;
    agent: string;
    session: string;
  };
  for (let i = 0; i < 200; i++) {
    await fetch(`${main.url}/v1/memories`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ subject: `user${i}`, predicate: 'prefers', value: `thing ${i}` }),
    });
  }
  const fixed: AuthContext = {
    keyId: me.key_id,
    tenant: me.tenant,
    agent: me.agent,
    session: me.session,
    admin: false,
    namespace: `${me.tenant}:${me.agent}`,
    expiresAt: null,
  };
  // Two servers built the same way on the same store; only key verification differs.
  const build = (verify?: (key: string) => Promise<AuthContext>) =>
    createMemoryServer({
      store: main.store,
      keys: new KeyService({ store: main.store, clock: systemClock }),
      clock: systemClock,
      log,
      defaultRegistry: starterRegistry('personal'),
      verify,
      limits: { perKeyPerSecond: 0 },
    });
  const verified = await build();
  const bypass = await build(async () => fixed);
  const verifiedUrl = await verified.app.listen({ host: '127.0.0.1', port: 0 });
  const bypassUrl = await bypass.app.listen({ host: '127.0.0.1', port: 0 });

  const recall = (url: string) =>
    runLoad({
      url,
      concurrency: 4,
      maxRequests: PER_ROUND,
      maxMs: 20_000,
      warmup: 200,
      headers: { authorization: `Bearer ${agentKey}` },
      request: (i) => ({ method: 'GET', path: `/v1/memories?subject=user${i % 200}&predicate=prefers` }),
    });
  const withAuth = { p50: [] as number[], p99: [] as number[], rps: [] as number[] };
  const without = { p50: [] as number[], p99: [] as number[], rps: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    // alternate which goes first so drift in machine load falls on both sides
    const order = r % 2 === 0 ? [verifiedUrl, bypassUrl] : [bypassUrl, verifiedUrl];
    for (const url of order) {
      const res = await recall(url);
      if (res.errors > 0) throw new Error(`recall errors: ${res.errorSamples.join('; ')}`);
      const s = summarize(res.latenciesMs);
      const into = url === verifiedUrl ? withAuth : without;
      into.p50.push(s.p50);
      into.p99.push(s.p99);
      into.rps.push(res.perSecond);
    }
    process.stderr.write(`round ${r + 1}/${ROUNDS}\n`);
  }
  // The same comparison without sockets (Fastify inject), where kernel and client noise is absent.
  const injectRound = async (app: typeof verified.app) => {
    const t0 = performance.now();
    for (let i = 0; i < INJECTS; i++) {
      await app.inject({
        method: 'GET',
        url: `/v1/memories?subject=user${i % 200}&predicate=prefers`,
        headers: { authorization: `Bearer ${agentKey}` },
      });
    }
    return ((performance.now() - t0) / INJECTS) * 1000;
  };
  const injVerified: number[] = [];
  const injBypass: number[] = [];
  for (let r = 0; r < ROUNDS * 2; r++) {
    if (r % 2 === 0) {
      injVerified.push(await injectRound(verified.app));
      injBypass.push(await injectRound(bypass.app));
    } else {
      injBypass.push(await injectRound(bypass.app));
      injVerified.push(await injectRound(verified.app));
    }
  }
  // And the verification itself, cached, per call.
  const keyService = new KeyService({ store: main.store, clock: systemClock });
  for (let i = 0; i < 5000; i++) await keyService.verify(agentKey);
  const v0 = performance.now();
  for (let i = 0; i < 100_000; i++) await keyService.verify(agentKey);
  const verifyUs = ((performance.now() - v0) / 100_000) * 1000;
  await verified.app.close();
  await bypass.app.close();

  const m = (xs: number[]) => median(xs);
  process.stdout.write(
    `\nTether bench:auth — ${EXCHANGES} exchanges against the API double; ${ROUNDS} alternating rounds of ${PER_ROUND} recalls, 4 clients\n\n`,
  );
  process.stdout.write(
    `${table([
      ['measure', 'p50 ms', 'p99 ms', 'req/s'],
      ['token exchange (TokenReview + 3 GETs + mint)', fmt(ex.p50), fmt(ex.p99), fmt(1000 / ex.mean)],
      ['recall, key verified (cached)', fmt(m(withAuth.p50)), fmt(m(withAuth.p99)), fmt(m(withAuth.rps))],
      ['recall, verification bypassed', fmt(m(without.p50)), fmt(m(without.p99)), fmt(m(without.rps))],
    ])}\n\n`,
  );
  // Paired per round (the two runs of a round sit next to each other in time), then the median.
  const ratioP50 = m(withAuth.p50.map((v, i) => v / (without.p50[i] as number)));
  const ratioRps = m(withAuth.rps.map((v, i) => (without.rps[i] as number) / v));
  process.stdout.write(
    `verified / bypassed over HTTP, median of per-round ratios: p50 latency ${ratioP50.toFixed(3)}x, time per request ${ratioRps.toFixed(3)}x\n`,
  );
  const injRatio = m(injVerified.map((v, i) => v / (injBypass[i] as number)));
  process.stdout.write(
    `verified / bypassed in-process (inject, ${INJECTS} recalls x ${ROUNDS * 2} rounds): ${fmt(m(injVerified))} vs ${fmt(m(injBypass))} us per recall = ${injRatio.toFixed(3)}x  (target <= 1.10)\n`,
  );
  process.stdout.write(`key verification alone (cached): ${verifyUs.toFixed(2)} us per call\n`);
} finally {
  await main.close();
  await kube.close();
  rmSync(dir, { recursive: true, force: true });
}

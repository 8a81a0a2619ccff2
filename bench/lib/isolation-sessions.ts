/**
 * @module
 * The isolation rows of `npm run bench:gateway`: cold start and resume from pause, to first byte, with
 * `--isolation none` and `--isolation namespaces` side by side in one run (two gateways on the same
 * services, samples interleaved so both see the same machine), medians and the ratio. Loopback only.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalRuntime, pickSessionStore } from '../../src/cli/drivers.ts';
import { silentLogger } from '../../src/common/log.ts';
import { type Gateway, startGateway } from '../../src/gateway/gateway.ts';
import { createIsolation, defaultSandboxDir } from '../../src/runtime/local/isolation/choose-isolation.ts';
import { serviceYaml } from '../../test/gateway/helpers/harness.ts';
import { percentile } from './stats.ts';

type Inst = { service: string; state: string };

function get(url: string, headers: Record<string, string>): Promise<{ ms: number; status: number; body: string }> {
  const u = new URL(url);
  if (u.hostname !== '127.0.0.1') throw new Error(`bench refuses non-loopback ${url}`);
  return new Promise((ok, fail) => {
    const t0 = performance.now();
    request({ host: u.hostname, port: u.port, path: u.pathname, agent: false, headers }, (res) => {
      const ms = performance.now() - t0;
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => ok({ ms, status: res.statusCode ?? 0, body }));
    })
      .on('error', fail)
      .end();
  });
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const instances = async (gw: Gateway) => JSON.parse((await get(`${gw.adminUrl}/_tether/instances`, {})).body) as Inst[];

/** One cold start: wait for scale to zero, then a new session's first byte (ms). */
async function coldStart(gw: Gateway, i: number): Promise<number> {
  await until('scaled to zero', async () => (await instances(gw)).every((x) => x.service !== 'cold'));
  const r = await get(`${gw.publicUrl}/`, { host: 'cold.default.example.com', cookie: `s=c${i}` });
  if (r.status !== 200) throw new Error(`cold start answered ${r.status}`);
  return r.ms;
}

/** One resume: wait until the session's instance is paused, then its next request's first byte (ms). */
async function resume(gw: Gateway): Promise<number> {
  await until('paused', async () => (await instances(gw)).some((x) => x.service === 'pause' && x.state === 'paused'));
  const r = await get(`${gw.publicUrl}/`, { host: 'pause.default.example.com', cookie: 's=p' });
  if (r.status !== 200) throw new Error(`resume answered ${r.status}`);
  return r.ms;
}

/**
 * Measures and prints the rows. Needs what `--isolation namespaces` needs (bubblewrap; root for the
 * network and the freezer); says so and prints nothing else when it is impossible.
 */
export async function benchIsolation(dir: string, samples: number): Promise<void> {
  // The manifests' folder is the services' workingDir: like a checkout, one an instance's uid may enter
  // (mkdtemp makes 0700, which isolation refuses to show; a 0700 parent would add a staging mount).
  const servicesDir = await mkdtemp(join(tmpdir(), 'tether-bench-isolation-'));
  await chmod(servicesDir, 0o755);
  try {
    await measure(dir, servicesDir, samples);
  } finally {
    await rm(servicesDir, { recursive: true, force: true });
  }
}

async function measure(dir: string, servicesDir: string, samples: number): Promise<void> {
  const file = join(servicesDir, 'isolation-services.yaml');
  await writeFile(
    file,
    [
      serviceYaml('pause', {
        'serving.knative.dev/session-affinity-cookie': 's',
        'serving.knative.dev/sandbox-idle-policy': 'pause',
        'serving.knative.dev/session-timeout': '100ms',
      }),
      serviceYaml('cold', {
        'serving.knative.dev/session-affinity-cookie': 's',
        'serving.knative.dev/session-timeout': '100ms',
      }),
    ].join('---\n'),
  );
  let isolation: Awaited<ReturnType<typeof createIsolation>>;
  try {
    isolation = await createIsolation({
      requested: 'namespaces',
      why: 'bench',
      hidden: [],
      dir: defaultSandboxDir(),
      log: silentLogger(),
    });
  } catch (err) {
    console.log(`\nisolation rows skipped: ${(err as Error).message}`);
    return;
  }
  const opts = { services: file, port: 0, adminPort: 0, host: '127.0.0.1', reconcileIntervalMs: 20 };
  const drivers = (stateDir: string, sandboxes?: typeof isolation) => ({
    runtime: openLocalRuntime({ log: silentLogger(), graceMs: 1000, stateDir, isolation: sandboxes }),
    sessionStore: pickSessionStore({ sessionStore: 'memory', redisPrefix: 'tether:' }, silentLogger()),
  });
  const plain = await startGateway({ ...opts, log: silentLogger(), ...drivers(join(dir, 'state-plain')) });
  const isolated = await startGateway({ ...opts, log: silentLogger(), ...drivers(join(dir, 'state-iso'), isolation) });
  try {
    const gateways: Array<[string, Gateway]> = [
      ['none', plain],
      ['namespaces', isolated],
    ];
    const cold = new Map<string, number[]>(gateways.map(([n]) => [n, []]));
    const resumed = new Map<string, number[]>(gateways.map(([n]) => [n, []]));
    for (const [, gw] of gateways) await get(`${gw.publicUrl}/`, { host: 'pause.default.example.com', cookie: 's=p' });
    // Interleaved: each sample of one mode is followed by one of the other, so load on this shared machine
    // falls on both alike.
    // As many cold starts as resumes: on a shared machine 15 samples leave the median at the mercy of load.
    for (let i = 0; i < samples; i++) {
      for (const [name, gw] of gateways) cold.get(name)?.push(await coldStart(gw, i));
    }
    for (let i = 0; i < samples; i++) {
      for (const [name, gw] of gateways) resumed.get(name)?.push(await resume(gw));
    }
    const row = (title: string, m: Map<string, number[]>, digits: number) => {
      const [a, b] = [m.get('none') ?? [], m.get('namespaces') ?? []];
      const [a50, b50] = [percentile(a, 50), percentile(b, 50)];
      console.log(
        `  ${title.padEnd(20)} ${a50.toFixed(digits).padStart(8)} / ${percentile(a, 99).toFixed(digits).padStart(8)}` +
          `   ${b50.toFixed(digits).padStart(8)} / ${percentile(b, 99).toFixed(digits).padStart(8)}   ${(b50 / a50).toFixed(2)}x`,
      );
    };
    console.log(`\nisolation: --isolation none vs namespaces, to first byte (ms, p50 / p99; interleaved samples)`);
    console.log('  figure                  none p50 / p99    namespaces p50 / p99   ratio (p50)');
    row(`cold start (${cold.get('none')?.length})`, cold, 1);
    row(`resume (${samples})`, resumed, 3);
    console.log('  targets: cold start <= 1.5x of plain processes, resume p50 <= 5 ms with the freezer');
  } finally {
    await isolated.close();
    await plain.close();
  }
}

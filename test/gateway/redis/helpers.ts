/**
 * @module
 * Gateways on a real Redis for tests: `redisGateway` starts one in-process (loopback ports, its own state
 * folder and gateway id) over a `RedisSessionStore` with the given prefix, and keeps the store at hand.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { silentLogger } from '../../../src/common/log.ts';
import type { Gateway, GatewayOptions } from '../../../src/gateway/gateway.ts';
import { RedisSessionStore } from '../../../src/sessions/redis/redis-store.ts';
import { parseRedisUrl } from '../../../src/sessions/redis/redis-url.ts';
import { startTestGateway } from '../helpers/harness.ts';

/** A gateway and its Redis store. */
export interface RedisGateway {
  gw: Gateway;
  store: RedisSessionStore;
}

/** Starts a gateway on Redis `url` under `prefix` as `gatewayId`; closed after the test. */
export async function redisGateway(
  t: TestContext,
  yaml: string,
  o: { url: string; prefix: string; gatewayId: string } & Partial<GatewayOptions>,
): Promise<RedisGateway> {
  const { url, prefix, gatewayId, ...rest } = o;
  const stateDir = await mkdtemp(join(tmpdir(), 'tether-state-'));
  const store = new RedisSessionStore({ target: parseRedisUrl(url), prefix, log: silentLogger(), maxBackoffMs: 100 });
  const gw = await startTestGateway(t, yaml, { sessionStore: store, gatewayId, stateDir, ...rest });
  // With Redis, close() leaves instances running for the next gateway: stop them when the test is done.
  t.after(async () => {
    await gw.close();
    await killRecorded(stateDir);
    await rm(stateDir, { recursive: true, force: true });
  });
  return { gw, store };
}

/** SIGKILLs the process group of every instance recorded in a local runtime state folder. */
export async function killRecorded(stateDir: string): Promise<void> {
  for (const f of await readdir(stateDir).catch(() => [] as string[])) {
    if (!f.endsWith('.json')) continue;
    try {
      const { pgid } = JSON.parse(await readFile(join(stateDir, f), 'utf8')) as { pgid: number };
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // gone, or not a record
    }
  }
}

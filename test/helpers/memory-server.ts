/**
 * @module
 * Test helper: a real memory server listening on a free port over a temp data folder, plus a tiny
 * HTTP client. Each call gets its own folder; `close()` stops the server and removes the folder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite } from '../../src/cli/drivers.ts';
import type { Clock } from '../../src/common/clock.ts';
import { randomHex } from '../../src/common/ids.ts';
import { silentLogger } from '../../src/common/log.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { type RunningMemoryServer, type StandaloneOptions, startMemoryServer } from '../../src/server/standalone.ts';

/** A response, body parsed as JSON when it is JSON. */
export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** A started test server. */
export interface TestMemoryServer {
  url: string;
  adminKey: string;
  dataDir: string;
  running: RunningMemoryServer;
  /** Calls the server. `body` objects are sent as JSON; strings as they are. */
  call(
    method: string,
    path: string,
    options?: { key?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<TestResponse>;
  /** Mints an agent key for `tenant:agent` (optionally with a TTL in seconds). */
  agentKey(tenant: string, agent: string, ttlSeconds?: number): Promise<string>;
  /** Stops the server; `keepData` leaves the folder for a restart. */
  close(keepData?: boolean): Promise<void>;
}

/** Starts a server; pass `dataDir` to reuse a folder (restart). */
export async function startTestMemoryServer(
  options: { dataDir?: string; adminKey?: string; clock?: Clock } & Partial<
    Pick<
      StandaloneOptions,
      | 'plugins'
      | 'keyCacheTtlMs'
      | 'metricsToken'
      | 'limits'
      | 'maxScanEvents'
      | 'importOffLoopBytes'
      | 'maxBodyBytesInWork'
      | 'requestTimeoutMs'
      | 'consoleGateway'
    >
  > = {},
): Promise<TestMemoryServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'tether-test-'));
  const adminKey = options.adminKey ?? `tth_${randomHex(8)}_${randomHex(32)}`;
  const running = await startMemoryServer({
    ...openSqlite(dataDir),
    port: 0,
    dataDir,
    defaultRegistry: starterRegistry('personal'),
    log: silentLogger(),
    adminKey,
    clock: options.clock,
    plugins: options.plugins,
    keyCacheTtlMs: options.keyCacheTtlMs,
    metricsToken: options.metricsToken,
    limits: options.limits,
    maxScanEvents: options.maxScanEvents,
    importOffLoopBytes: options.importOffLoopBytes,
    maxBodyBytesInWork: options.maxBodyBytesInWork,
    requestTimeoutMs: options.requestTimeoutMs,
    consoleGateway: options.consoleGateway,
  });
  const call: TestMemoryServer['call'] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(new URL(path, running.url), { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
  return {
    url: running.url,
    adminKey,
    dataDir,
    running,
    call,
    async agentKey(tenant, agent, ttlSeconds) {
      const r = await call('POST', '/v1/keys', {
        key: adminKey,
        body: { tenant, agent, ...(ttlSeconds ? { ttl_seconds: ttlSeconds } : {}) },
      });
      if (r.status !== 201) throw new Error(`minting a key failed: ${r.text}`);
      return r.body.key as string;
    },
    async close(keepData = false) {
      await running.close();
      if (!keepData && options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

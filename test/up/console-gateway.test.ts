/**
 * The memory port is the one port an isolated instance may reach: under `tether up` nothing of the gateway
 * admin API may be reachable through it without the admin token, and its console pass-through may not be
 * walked out of `/_tether/` (issue 22 item 5: `/_tether/../metrics`, `%2e%2e`, `..//..//x` reached the
 * gateway's /metrics and admin root). Black-box against the real platform: memory server and gateway.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { localPlatformDrivers } from '../../src/cli/drivers.ts';
import { silentLogger } from '../../src/common/log.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { type LocalPlatform, startLocalPlatform } from '../../src/up/platform.ts';
import { send, serviceYaml } from '../gateway/helpers/harness.ts';

let dir: string;
let platform: LocalPlatform;
let token: string;
const KEY = 'console-gateway-session-key';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tether-console-gw-'));
  const manifest = join(dir, 'svc.yaml');
  writeFileSync(manifest, serviceYaml('cg', { 'serving.knative.dev/session-affinity-cookie': 'app' }));
  platform = await startLocalPlatform({
    dataDir: join(dir, 'data'),
    services: [manifest],
    memoryPort: 0,
    gatewayPort: 0,
    adminPort: 0,
    defaultRegistry: starterRegistry('personal'),
    drivers: localPlatformDrivers({ isolation: 'none', graceMs: 500 }),
    log: silentLogger(),
  });
  token = readFileSync(platform.adminTokenFile, 'utf8').trim();
  const r = await send(platform.gateway.publicUrl, {
    host: 'cg.default.example.com',
    headers: { cookie: `app=${KEY}` },
  });
  assert.equal(r.status, 200);
});
after(async () => {
  await platform.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A request to the memory port with its target as written (fetch would resolve the dot segments first). */
function raw(
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const url = new URL(platform.memory.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** True when `body` shows something only the gateway admin API holds. */
const leaks = (body: string) => body.includes(KEY) || body.includes('tether_gateway') || body.includes('"routes"');

const PREFIX = '/console/gateway/_tether';

describe('the gateway admin API through the memory port', () => {
  it('answers nothing of it without the admin token', async () => {
    const instances = JSON.parse(
      (
        await send(platform.gateway.adminUrl, {
          path: '/_tether/instances',
          headers: { authorization: `Bearer ${token}` },
        })
      ).body,
    ) as Array<{ name: string }>;
    const name = instances[0]?.name as string;
    const calls: Array<[string, string]> = [
      ['GET', `${PREFIX}/services`],
      ['GET', `${PREFIX}/sessions`],
      ['GET', `${PREFIX}/sessions?reveal=keys`],
      ['GET', `${PREFIX}/instances`],
      ['GET', `${PREFIX}/instances/${name}/logs`],
      ['DELETE', `${PREFIX}/instances/${name}`],
    ];
    for (const [method, path] of calls) {
      const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer not-the-token' }];
      for (const headers of attempts) {
        const r = await raw(method, path, headers);
        assert.equal(r.status, 401, `${method} ${path}`);
        assert.ok(!leaks(r.body), `${method} ${path}: ${r.body}`);
      }
    }
    // With the token the console's calls work (the instance above was not deleted).
    const ok = await raw('GET', `${PREFIX}/sessions?reveal=keys`, { authorization: `Bearer ${token}` });
    assert.equal(ok.status, 200);
    assert.ok(ok.body.includes(KEY));
  });

  it("never leaves /_tether/'s allow-list, with or without the token: /metrics and the admin root stay out of reach", async () => {
    for (const path of [
      `${PREFIX}/../metrics`,
      `${PREFIX}/%2e%2e/metrics`,
      `${PREFIX}/%2E%2e/`,
      `${PREFIX}/..//..//x`,
      `${PREFIX}/..//..//metrics`,
      `${PREFIX}/.%2e/.%2e/metrics`,
      `${PREFIX}/sessions%2f..%2f..%2fmetrics`,
      `${PREFIX}/..\\..\\metrics`,
      `${PREFIX}/./../../`,
      `${PREFIX}/metrics`,
      `${PREFIX}/`,
      '/console/gateway/metrics',
      '/console/gateway/',
    ]) {
      const attempts: Array<Record<string, string>> = [{}, { authorization: `Bearer ${token}` }];
      for (const headers of attempts) {
        for (const method of ['GET', 'DELETE']) {
          const r = await raw(method, path, headers);
          assert.ok(r.status === 400 || r.status === 404, `${method} ${path}: ${r.status}`);
          assert.ok(!leaks(r.body), `${method} ${path}: ${r.body}`);
        }
      }
    }
  });
});

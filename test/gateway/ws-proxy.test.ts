import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import type { GatewayOptions } from '../../src/gateway/gateway.ts';
import { admin, send, serviceYaml, startTestGateway, waitFor, writeManifest } from './helpers/harness.ts';

const HOST = 'slow.default.example.com';

/**
 * An app whose upgrades answer 101 after ?delay= ms and then never close on their own (a half-open peer);
 * GET /stats counts the upgrade requests it received and its upgrade sockets the proxy has not closed yet.
 */
const SLOW_UPGRADE_APP = `import { createServer } from 'node:http';
let received = 0;
let open = 0;
const server = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ received, open }));
});
server.on('upgrade', (req, socket) => {
  received++;
  open++;
  let counted = true;
  const gone = () => {
    if (counted) open--;
    counted = false;
  };
  // The proxy's side ending counts as gone: this app never closes its own side (a half-open peer).
  socket.on('end', gone);
  socket.on('close', gone);
  socket.on('error', () => {});
  socket.resume();
  if (req.url.startsWith('/refuse')) {
    socket.end('HTTP/1.1 403 Forbidden\\r\\nContent-Length: 2\\r\\n\\r\\nno');
    return;
  }
  const delay = Number(new URL(req.url, 'http://x').searchParams.get('delay') ?? 0);
  setTimeout(() => {
    if (!socket.destroyed) socket.write('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: test\\r\\nConnection: Upgrade\\r\\n\\r\\n');
  }, delay);
});
server.listen(Number(process.env.PORT), '127.0.0.1');
`;

async function startSlowGateway(t: TestContext, options: Partial<GatewayOptions> = {}) {
  const dir = dirname(await writeManifest(t, '', 'unused.yaml'));
  const app = join(dir, 'slow-upgrade.mjs');
  await writeFile(app, SLOW_UPGRADE_APP);
  const yaml = serviceYaml('slow', {
    'serving.knative.dev/session-affinity-cookie': 'app',
    'serving.knative.dev/session-timeout': '30m',
  }).replace(/- command: .*\n/, `- command: ["node", "${app}"]\n`);
  return startTestGateway(t, yaml, options);
}

/** Opens a raw connection and sends an upgrade request for session `key`. */
async function rawUpgrade(
  t: TestContext,
  publicUrl: string,
  key: string,
  delayMs: number,
  path = '/ws',
): Promise<Socket> {
  const url = new URL(publicUrl);
  const sock = connect({ host: url.hostname, port: Number(url.port) });
  t.after(() => sock.destroy());
  sock.on('error', () => {});
  await new Promise((r) => sock.once('connect', r));
  sock.write(
    `GET ${path}?delay=${delayMs} HTTP/1.1\r\nHost: ${HOST}\r\nCookie: app=${key}\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n`,
  );
  return sock;
}

async function stats(publicUrl: string, key: string): Promise<{ received: number; open: number }> {
  const r = await send(publicUrl, { host: HOST, path: '/stats', headers: { cookie: `app=${key}` } });
  return JSON.parse(r.body) as { received: number; open: number };
}

async function sessionState(gw: { adminUrl: string }, key: string): Promise<string | undefined> {
  const all = await admin<Array<{ key: string; state: string }>>(gw as never, '/_tether/sessions?reveal=keys');
  return all.find((s) => s.key === key)?.state;
}

describe('WebSocket upgrade proxy', () => {
  it('aborts the upstream upgrade when the client leaves before a slow 101', async (t) => {
    const gw = await startSlowGateway(t);
    await stats(gw.publicUrl, 'k'); // the session and its instance exist
    const sock = await rawUpgrade(t, gw.publicUrl, 'k', 400);
    await waitFor('upgrade request at the instance', async () => (await stats(gw.publicUrl, 'k')).received === 1);
    sock.destroy();
    await waitFor('session idle', async () => (await sessionState(gw, 'k')) === 'idle');
    // Past the 101 the instance would have sent: its upgrade socket must be closed, not left to the proxy.
    await waitFor('no upgrade socket left at the instance', async () => (await stats(gw.publicUrl, 'k')).open === 0);
    await new Promise((r) => setTimeout(r, 500)); // the 101 moment has passed
    assert.deepEqual(await stats(gw.publicUrl, 'k'), { received: 1, open: 0 });
    assert.equal(await sessionState(gw, 'k'), 'idle');
  });

  it('closes both sides when the client half-closes an upgraded connection, so the session goes idle', async (t) => {
    const gw = await startSlowGateway(t);
    const sock = await rawUpgrade(t, gw.publicUrl, 'h', 0);
    let head = '';
    sock.setEncoding('utf8');
    sock.on('data', (c: string) => {
      head += c;
    });
    await waitFor('101 relayed', () => head.startsWith('HTTP/1.1 101'));
    assert.equal(await sessionState(gw, 'h'), 'active');
    sock.end(); // FIN, but keeps reading: half-open
    await waitFor('session idle', async () => (await sessionState(gw, 'h')) === 'idle');
    await waitFor('no upgrade socket left at the instance', async () => (await stats(gw.publicUrl, 'h')).open === 0);
    await waitFor('client socket closed', () => sock.destroyed || sock.readableEnded);
  });

  it('releases the session of a refused upgrade once the client closes', async (t) => {
    const gw = await startSlowGateway(t);
    const sock = await rawUpgrade(t, gw.publicUrl, 'r', 0, '/refuse');
    let text = '';
    sock.setEncoding('utf8');
    sock.on('data', (c: string) => {
      text += c;
    });
    await waitFor('403 relayed', () => text.startsWith('HTTP/1.1 403') && text.endsWith('no'));
    sock.end();
    await waitFor('session idle', async () => (await sessionState(gw, 'r')) === 'idle');
  });

  it('answers 502 JSON when the instance does not answer the upgrade in time', async (t) => {
    const gw = await startSlowGateway(t, { proxyTimeoutMs: 300 });
    const sock = await rawUpgrade(t, gw.publicUrl, 'slow', 60_000);
    let text = '';
    sock.setEncoding('utf8');
    sock.on('data', (c: string) => {
      text += c;
    });
    await waitFor('502 sent', () => text.includes('"code":"bad_gateway"'));
    assert.match(text, /^HTTP\/1\.1 502 /);
    assert.match(text, /did not answer the upgrade in time/);
    await waitFor('no upgrade socket left at the instance', async () => (await stats(gw.publicUrl, 'slow')).open === 0);
    await waitFor('session idle', async () => (await sessionState(gw, 'slow')) === 'idle');
  });
});

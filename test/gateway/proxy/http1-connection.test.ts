import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { admin, serviceYaml, startTestGateway, waitFor } from '../helpers/harness.ts';
import { rawClient } from '../helpers/raw-client.ts';

const HOST = 'p.default.example.com';
const YAML = serviceYaml('p', {
  'serving.knative.dev/session-affinity-cookie': 'app',
  'serving.knative.dev/session-timeout': '30m',
});

/**
 * An app that closes idle keep-alive connections after ~1.1 s and numbers its connections (`x-conn`), so
 * a test sees which one carried a request; `/close-delimited` answers a body that ends when the connection
 * closes; `/first-only` answers only the first request of a connection and resets it on the next one.
 */
const EDGE_APP = `import { createServer } from 'node:http';
let conns = 0;
const server = createServer((req, res) => {
  if (req.url === '/close-delimited') {
    req.socket.end('HTTP/1.1 200 OK\\r\\nContent-Type: text/plain\\r\\nConnection: close\\r\\n\\r\\nuntil the very end');
    return;
  }
  if (req.url === '/first-only' && ++req.socket.served > 1) {
    req.socket.destroy();
    return;
  }
  res.writeHead(200, { 'content-type': 'text/plain', 'x-conn': String(req.socket.n) });
  res.end('ok');
});
server.on('connection', (s) => { s.n = ++conns; s.served = 0; });
server.keepAliveTimeout = 100;
server.listen(Number(process.env.PORT), '127.0.0.1');
`;

async function startEdgeGateway(t: TestContext) {
  const dir = await mkdtemp(join(tmpdir(), 'tether-edge-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const app = join(dir, 'edge-app.mjs');
  await writeFile(app, EDGE_APP);
  const yaml = serviceYaml('p', { 'serving.knative.dev/session-affinity-cookie': 'app' }).replace(
    /- command: .*\n/,
    `- command: ["node", "${app}"]\n`,
  );
  return startTestGateway(t, yaml);
}

/** A masked WebSocket text frame (client to server), payload < 126 bytes. */
function wsFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = randomBytes(4);
  const masked = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] as number)));
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]);
}

describe('raw HTTP/1.1 proxy path', () => {
  it('answers pipelined requests in order on one connection, HEAD without a body', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const c = await rawClient(t, gw.publicUrl);
    const cookie = 'Cookie: app=pipe\r\n';
    c.write(
      `GET /env HTTP/1.1\r\nHost: ${HOST}\r\n${cookie}\r\n` +
        `GET /stream?n=2 HTTP/1.1\r\nHost: ${HOST}\r\n${cookie}\r\n` +
        `HEAD / HTTP/1.1\r\nHost: ${HOST}\r\n${cookie}\r\n` +
        `GET / HTTP/1.1\r\nHost: ${HOST}\r\n${cookie}\r\n`,
      'GET',
      'GET',
      'HEAD',
      'GET',
    );
    const [env, stream, head, last] = await c.read(4);
    assert.equal(JSON.parse(String(env?.body)).count, 1);
    assert.equal(String(stream?.body), 'chunk 1\nchunk 2\n');
    assert.equal(head?.status, 200);
    assert.equal(head?.body.length, 0);
    assert.equal(head?.headers['x-count'], '3');
    assert.equal(last?.headers['x-count'], '4');
    assert.match(String(last?.body), /Requests served: 4/);
    assert.equal(c.isClosed, false);
  });

  it('re-frames a chunked upload, relays a chunked answer, and honours Connection: close', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const c = await rawClient(t, gw.publicUrl);
    c.write(
      `POST /echo HTTP/1.1\r\nHost: ${HOST}\r\nCookie: app=ch\r\nTransfer-Encoding: chunked\r\n\r\n` +
        '5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
      'POST',
    );
    const [echo] = await c.read();
    assert.equal(String(echo?.body), 'hello world');
    assert.equal(echo?.headers['transfer-encoding'], 'chunked');
    c.get(HOST, '/', { Cookie: 'app=ch', Connection: 'close' });
    const [last] = await c.read();
    assert.equal(last?.status, 200);
    assert.equal(last?.headers.connection, 'close');
    await c.closed();
  });

  it('relays a close-delimited answer as chunked and keeps the client connection', async (t) => {
    const gw = await startEdgeGateway(t);
    const c = await rawClient(t, gw.publicUrl);
    c.get(HOST, '/close-delimited', { Cookie: 'app=cd' });
    const [r] = await c.read();
    assert.equal(String(r?.body), 'until the very end');
    assert.equal(r?.headers['transfer-encoding'], 'chunked');
    c.get(HOST, '/', { Cookie: 'app=cd' });
    assert.equal((await c.read())[0]?.status, 200);
  });

  it('reuses a keep-alive instance connection, and never one the instance closed while idle', async (t) => {
    const gw = await startEdgeGateway(t);
    const c = await rawClient(t, gw.publicUrl);
    c.get(HOST, '/', { Cookie: 'app=ka' });
    const [a] = await c.read();
    c.get(HOST, '/', { Cookie: 'app=ka' });
    const [b] = await c.read();
    assert.equal(b?.headers['x-conn'], a?.headers['x-conn']); // same upstream socket
    await delay(1500); // node closes idle keep-alive sockets after keepAliveTimeout (100 ms) + ~1 s
    c.get(HOST, '/', { Cookie: 'app=ka' });
    const [d] = await c.read();
    assert.equal(d?.status, 200);
    assert.notEqual(d?.headers['x-conn'], a?.headers['x-conn']);
  });

  it('retries a body-less request once on a fresh connection when a reused one fails unanswered', async (t) => {
    const gw = await startEdgeGateway(t);
    const c = await rawClient(t, gw.publicUrl);
    c.get(HOST, '/first-only', { Cookie: 'app=rt' });
    const [a] = await c.read();
    c.get(HOST, '/first-only', { Cookie: 'app=rt' }); // the reused connection is reset: retried
    const [b] = await c.read();
    assert.equal(b?.status, 200);
    assert.notEqual(b?.headers['x-conn'], a?.headers['x-conn']);
    // With a body it is not sent twice: 502.
    c.write(`POST /first-only HTTP/1.1\r\nHost: ${HOST}\r\nCookie: app=rt\r\nContent-Length: 3\r\n\r\nabc`, 'POST');
    const [post] = await c.read();
    assert.equal(post?.status, 502);
    c.get(HOST, '/', { Cookie: 'app=rt' });
    assert.equal((await c.read())[0]?.status, 200);
  });

  it('answers 502 when the instance dies mid-request and serves the next request on the same connection', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const c = await rawClient(t, gw.publicUrl);
    c.get(HOST, '/', { Cookie: 'app=die' });
    const pid = Number((await c.read())[0]?.headers['x-pid']);
    c.get(HOST, '/hang', { Cookie: 'app=die' });
    await waitFor('request in flight', async () => {
      const s = await admin<Array<{ state: string }>>(gw, '/_tether/sessions');
      return s[0]?.state === 'active';
    });
    process.kill(pid, 'SIGKILL');
    const [failed] = await c.read();
    assert.equal(failed?.status, 502);
    assert.equal(JSON.parse(String(failed?.body)).error.code, 'bad_gateway');
    await waitFor('dead instance dropped', async () => (await admin<unknown[]>(gw, '/_tether/instances')).length === 0);
    c.get(HOST, '/', { Cookie: 'app=die' });
    const [next] = await c.read();
    assert.equal(next?.status, 200);
    assert.notEqual(Number(next?.headers['x-pid']), pid);
  });

  it('releases the session when the client leaves mid-request', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const c = await rawClient(t, gw.publicUrl);
    c.get(HOST, '/hang?head=1', { Cookie: 'app=gone' });
    const sessions = () => admin<Array<{ state: string }>>(gw, '/_tether/sessions');
    await waitFor('request in flight', async () => (await sessions())[0]?.state === 'active');
    c.socket.destroy();
    await waitFor('session released', async () => (await sessions())[0]?.state === 'idle');
  });

  it('streams a large upload through and back with backpressure (answer starts before the upload ends)', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const url = new URL(gw.publicUrl);
    const piece = randomBytes(64 * 1024);
    const pieces = 256; // 16 MiB
    const sent = createHash('sha256');
    const got = createHash('sha256');
    let received = 0;
    let receivedBeforeEnd = -1;
    const req = request({
      host: url.hostname,
      port: url.port,
      method: 'POST',
      path: '/echo',
      agent: false,
      headers: { host: HOST, cookie: 'app=big', 'content-type': 'application/octet-stream' },
    });
    const answered = new Promise<number>((ok, fail) => {
      req.on('response', (res) => {
        res.on('data', (c: Buffer) => {
          received += c.length;
          got.update(c);
        });
        res.on('end', () => ok(res.statusCode ?? 0));
        res.on('error', fail);
      });
      req.on('error', fail);
    });
    for (let i = 0; i < pieces; i++) {
      sent.update(piece);
      if (!req.write(piece)) await once(req, 'drain');
    }
    receivedBeforeEnd = received;
    req.end();
    assert.equal(await answered, 200);
    assert.equal(received, piece.length * pieces);
    assert.equal(got.digest('hex'), sent.digest('hex'));
    assert.ok(receivedBeforeEnd > 0, 'the echo streamed back while the upload was still going');
  });

  it('answers oversized headers with a JSON 431, malformed requests with a 400, and closes', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const big = await rawClient(t, gw.publicUrl);
    big.write(`GET / HTTP/1.1\r\nHost: ${HOST}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 'GET');
    const [overflow] = await big.read();
    assert.equal(overflow?.status, 431);
    assert.equal(overflow?.headers.connection, 'close');
    assert.deepEqual(JSON.parse(String(overflow?.body)).error, {
      code: 'headers_too_large',
      message: 'request headers too large',
    });
    await big.closed();
    // A valid request, then garbage pipelined behind it: the first is answered, then the 400.
    const bad = await rawClient(t, gw.publicUrl);
    bad.write(`GET / HTTP/1.1\r\nHost: ${HOST}\r\nCookie: app=m\r\n\r\nNOT HTTP\r\n\r\n`, 'GET', 'GET');
    const [ok, malformed] = await bad.read(2);
    assert.equal(ok?.status, 200);
    assert.equal(malformed?.status, 400);
    assert.equal(malformed?.headers.connection, 'close');
    assert.equal(JSON.parse(String(malformed?.body)).error.code, 'invalid_request');
    await bad.closed();
  });

  it('answers an unknown host with 404 and keeps the connection', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const c = await rawClient(t, gw.publicUrl);
    c.write('POST / HTTP/1.1\r\nHost: nope.example.com\r\nContent-Length: 3\r\n\r\nabc', 'POST');
    const [r] = await c.read();
    assert.equal(r?.status, 404);
    assert.match(JSON.parse(String(r?.body)).error.message, /p\.default\.example\.com/);
    c.get(HOST, '/', { Cookie: 'app=nf' });
    assert.equal((await c.read())[0]?.status, 200);
  });

  it('hands a WebSocket upgrade after an ordinary request on the same connection to the upgrade path', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const c = await rawClient(t, gw.publicUrl);
    c.get(HOST, '/', { Cookie: 'app=ws' });
    const pid = (await c.read())[0]?.headers['x-pid'];
    assert.ok(pid);
    c.get(HOST, '/ws', {
      Cookie: 'app=ws',
      Connection: 'Upgrade',
      Upgrade: 'websocket',
      'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
      'Sec-WebSocket-Version': '13',
    });
    const [switched] = await c.read();
    assert.equal(switched?.status, 101);
    const echoed = once(c.socket, 'data');
    c.socket.write(wsFrame('over the same socket'));
    const [frame] = (await echoed) as [Buffer];
    assert.equal(frame.subarray(2).toString(), 'over the same socket');
  });

  it('answers CONNECT, also after an ordinary request on the connection, with a JSON 405 and closes', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const c = await rawClient(t, gw.publicUrl);
    c.get(HOST, '/', { Cookie: 'app=cn' });
    c.write(`CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n`, 'CONNECT');
    const [ok, refused] = await c.read(2);
    assert.equal(ok?.status, 200);
    assert.equal(refused?.status, 405);
    assert.equal(refused?.headers.connection, 'close');
    assert.equal(JSON.parse(String(refused?.body)).error.code, 'method_not_allowed');
    await c.closed();
  });

  it('hands Expect: 100-continue and HTTP/1.0 requests to node:http', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const c = await rawClient(t, gw.publicUrl);
    c.write(
      `POST /echo HTTP/1.1\r\nHost: ${HOST}\r\nCookie: app=ex\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n`,
      'POST',
    );
    await delay(50);
    c.write('hello');
    assert.equal(String((await c.read())[0]?.body), 'hello');
    const old = await rawClient(t, gw.publicUrl);
    old.write(`GET /env HTTP/1.0\r\nHost: ${HOST}\r\nCookie: app=ex\r\n\r\n`, 'GET');
    const [r] = await old.read();
    assert.equal(JSON.parse(String(r?.body)).headers.cookie, 'app=ex');
  });
});

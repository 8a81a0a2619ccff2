import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { serviceYaml, startTestGateway } from '../helpers/harness.ts';
import { rawClient } from '../helpers/raw-client.ts';

const HOST = 'p.default.example.com';

/**
 * An instance written on net, so its bytes are exactly what a test needs: `/early` and `/continue` send a
 * 1xx before the answer, `/switch` an unasked-for 101, `/trailers` a chunked answer with a trailer,
 * `/poison` an answer followed by the start of another one, `/gzip` a `gzip, chunked` body, `/many` 40
 * headers; every answer carries `x-conn` (the connection's number) and, as body, the request line.
 */
const RAW_APP = `import { createServer } from 'node:net';
let conns = 0;
const ok = (n, line, extra = '') =>
  'HTTP/1.1 200 OK\\r\\nContent-Length: ' + line.length + '\\r\\nx-conn: ' + n + '\\r\\n' + extra + '\\r\\n' + line;
createServer((s) => {
  const n = ++conns;
  let buf = '';
  s.on('data', (d) => {
    buf += d.toString('latin1');
    let end;
    while ((end = buf.indexOf('\\r\\n\\r\\n')) >= 0) {
      const line = buf.slice(0, buf.indexOf('\\r\\n'));
      buf = buf.slice(end + 4);
      const path = line.split(' ')[1];
      if (path === '/early') s.write('HTTP/1.1 103 Early Hints\\r\\nLink: </a.css>\\r\\n\\r\\n' + ok(n, line));
      else if (path === '/continue') s.write('HTTP/1.1 100 Continue\\r\\n\\r\\n' + ok(n, line));
      else if (path === '/switch') s.write('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: x\\r\\nConnection: Upgrade\\r\\n\\r\\n');
      else if (path === '/trailers')
        s.write('HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked\\r\\nx-conn: ' + n + '\\r\\n\\r\\n2\\r\\nok\\r\\n0\\r\\nX-Trailer: leaked\\r\\n\\r\\n');
      else if (path === '/gzip') s.write('HTTP/1.1 200 OK\\r\\nTransfer-Encoding: gzip, chunked\\r\\n\\r\\n2\\r\\nxx\\r\\n0\\r\\n\\r\\n');
      else if (path === '/poison') s.write(ok(n, line) + 'HTTP/1.1 200 OK\\r\\nX-Poison: 1\\r\\n');
      else if (path === '/many') {
        let extra = '';
        for (let i = 0; i < 40; i++) extra += 'x-h' + i + ': ' + i + '\\r\\n';
        s.write(ok(n, line, extra));
      } else s.write(ok(n, line));
    }
  });
  s.on('error', () => {});
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

async function startRawGateway(t: TestContext) {
  const dir = await mkdtemp(join(tmpdir(), 'tether-raw-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const app = join(dir, 'raw-app.mjs');
  await writeFile(app, RAW_APP);
  const yaml = serviceYaml('p', { 'serving.knative.dev/session-affinity-cookie': 'app' }).replace(
    /- command: .*\n/,
    `- command: ["node", "${app}"]\n`,
  );
  return startTestGateway(t, yaml);
}

describe('raw HTTP/1.1 proxy path, instance side', () => {
  it('answers with the final response after a 103 or 100 from the instance', { timeout: 120_000 }, async (t) => {
    const gw = await startRawGateway(t);
    const c = await rawClient(t, gw.publicUrl);
    c.get(HOST, '/early', { Cookie: 'app=1xx' });
    c.get(HOST, '/continue', { Cookie: 'app=1xx' });
    c.get(HOST, '/', { Cookie: 'app=1xx' });
    const [early, cont, plain] = await c.read(3);
    assert.equal(early?.status, 200);
    assert.equal(String(early?.body), 'GET /early HTTP/1.1');
    assert.equal(cont?.status, 200);
    assert.equal(String(cont?.body), 'GET /continue HTTP/1.1');
    assert.equal(String(plain?.body), 'GET / HTTP/1.1');
  });

  it('answers 502 to a 101 the request did not ask for, and keeps the client connection', {
    timeout: 120_000,
  }, async (t) => {
    const gw = await startRawGateway(t);
    const c = await rawClient(t, gw.publicUrl);
    c.get(HOST, '/switch', { Cookie: 'app=101' });
    c.get(HOST, '/', { Cookie: 'app=101' });
    const [sw, next] = await c.read(2);
    assert.equal(sw?.status, 502);
    assert.equal(JSON.parse(String(sw?.body)).error.code, 'bad_gateway');
    assert.equal(String(next?.body), 'GET / HTTP/1.1');
  });

  it('never carries a trailer of one response into the headers of the next', { timeout: 120_000 }, async (t) => {
    const gw = await startRawGateway(t);
    const c = await rawClient(t, gw.publicUrl);
    c.get(HOST, '/trailers', { Cookie: 'app=tr' });
    const [tr] = await c.read();
    assert.equal(String(tr?.body), 'ok');
    c.get(HOST, '/many', { Cookie: 'app=tr' }); // over 32 headers: node hands them over in parts
    const [many] = await c.read();
    assert.equal(many?.headers['x-conn'], tr?.headers['x-conn'], 'the same instance connection');
    assert.equal(many?.headers['x-h39'], '39');
    assert.equal(many?.headers['x-trailer'], undefined);
  });

  it('does not reuse an instance connection that sent bytes beyond its answer', { timeout: 120_000 }, async (t) => {
    const gw = await startRawGateway(t);
    const c = await rawClient(t, gw.publicUrl);
    c.get(HOST, '/poison', { Cookie: 'app=po' });
    const [po] = await c.read();
    assert.equal(String(po?.body), 'GET /poison HTTP/1.1');
    c.get(HOST, '/', { Cookie: 'app=po' });
    const [next] = await c.read();
    assert.equal(next?.status, 200);
    assert.equal(next?.headers['x-poison'], undefined);
    assert.equal(String(next?.body), 'GET / HTTP/1.1');
    assert.notEqual(next?.headers['x-conn'], po?.headers['x-conn']);
  });

  it('relays the transfer codings before chunked (gzip, chunked) of an answer', { timeout: 120_000 }, async (t) => {
    const gw = await startRawGateway(t);
    const c = await rawClient(t, gw.publicUrl);
    c.get(HOST, '/gzip', { Cookie: 'app=gz' });
    const [r] = await c.read();
    assert.equal(r?.headers['transfer-encoding'], 'gzip, chunked');
    assert.equal(String(r?.body), 'xx');
  });
});

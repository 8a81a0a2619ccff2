// A tiny session app for the Tether gateway examples: answers like the Knative helloworld-go-session
// sample (Hello World!, the request's cookies, the raw Cookie header) plus a per-process request
// counter, so state kept across pause/resume is visible. Also /ws (WebSocket echo, no library),
// /events (SSE), /stream (chunked), /env and /hang for tests. Listens on $HOST:$PORT (127.0.0.1:8080).
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';

let count = 0;
const port = Number(process.env.PORT ?? 8080);
// HOST: 0.0.0.0 in a container; a pod's own address under the Kubernetes API double.
const host = process.env.HOST ?? '127.0.0.1';

const server = createServer((req, res) => {
  // The gateway warms warm-pool instances with one request marked x-tether-probe: not counted.
  if (req.headers['x-tether-probe'] === undefined) count += 1;
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/env') {
    const keys = ['PORT', 'K_SERVICE', 'K_CONFIGURATION', 'K_REVISION', 'TETHER_INSTANCE', 'GREETING'];
    const env = Object.fromEntries(keys.map((k) => [k, process.env[k] ?? null]));
    const body = JSON.stringify({ pid: process.pid, count, env, headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
    return;
  }
  if (url.pathname === '/events') {
    const n = Number(url.searchParams.get('n') ?? 3);
    const gap = Number(url.searchParams.get('gap') ?? 50);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let i = 0;
    const timer = setInterval(() => {
      i += 1;
      res.write(`id: ${i}\ndata: tick ${i}\n\n`);
      if (i >= n) {
        clearInterval(timer);
        res.end();
      }
    }, gap);
    res.on('close', () => clearInterval(timer));
    return;
  }
  if (url.pathname === '/stream') {
    const n = Number(url.searchParams.get('n') ?? 5);
    res.writeHead(200, { 'content-type': 'text/plain' });
    let i = 0;
    const timer = setInterval(() => {
      i += 1;
      res.write(`chunk ${i}\n`);
      if (i >= n) {
        clearInterval(timer);
        res.end();
      }
    }, 20);
    res.on('close', () => clearInterval(timer));
    return;
  }
  if (url.pathname === '/echo') {
    res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/octet-stream' });
    req.pipe(res);
    return;
  }
  if (url.pathname === '/notready') {
    res.writeHead(503, { 'content-type': 'text/plain' });
    res.end('not ready\n');
    return;
  }
  if (url.pathname === '/hang') {
    // Never ends (tests of an instance dying mid-request); ?head=1 sends the headers first.
    if (url.searchParams.get('head') === '1') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('started\n');
    }
    return;
  }
  const raw = req.headers.cookie ?? '';
  let body = 'Hello World!\n\nCookies:\n';
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    body += `  Name:  ${part.slice(0, eq).trim()}\n  Value: ${part.slice(eq + 1).trim()}\n`;
  }
  body += `\nRaw Cookie Header: ${raw}\n`;
  body += `Instance: ${process.env.TETHER_INSTANCE ?? 'local'} (pid ${process.pid})\nRequests served: ${count}\n`;
  res.writeHead(200, {
    'content-type': 'text/plain; charset=utf-8',
    'x-pid': String(process.pid),
    'x-count': String(count),
  });
  res.end(body);
});

// Minimal WebSocket echo (RFC 6455, text frames, client frames masked, payloads < 64 KiB).
server.on('upgrade', (req, socket) => {
  const key = req.headers['sec-websocket-key'];
  if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/ws' || typeof key !== 'string') {
    socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
    return;
  }
  const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
  );
  let buf = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    while (buf.length >= 2) {
      const op = buf[0] & 0x0f;
      let len = buf[1] & 0x7f;
      let at = 2;
      if (len === 126) {
        if (buf.length < 4) return;
        len = buf.readUInt16BE(2);
        at = 4;
      }
      if (buf.length < at + 4 + len) return;
      const mask = buf.subarray(at, at + 4);
      const data = Buffer.from(buf.subarray(at + 4, at + 4 + len));
      for (let i = 0; i < data.length; i++) data[i] ^= mask[i % 4];
      buf = buf.subarray(at + 4 + len);
      if (op === 0x8) {
        socket.end(Buffer.from([0x88, 0]));
        return;
      }
      if (op === 0x9) {
        socket.write(Buffer.concat([Buffer.from([0x8a, data.length]), data]));
        continue;
      }
      const head =
        data.length < 126
          ? Buffer.from([0x81, data.length])
          : Buffer.from([0x81, 126, data.length >> 8, data.length & 0xff]);
      socket.write(Buffer.concat([head, data]));
    }
  });
  socket.on('error', () => socket.destroy());
});

server.keepAliveTimeout = 65_000;
server.listen(port, host, () => {
  process.stdout.write(`session-app ${process.env.TETHER_INSTANCE ?? ''} listening on ${port} (pid ${process.pid})\n`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));

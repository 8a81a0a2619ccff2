/**
 * @module
 * Compares the two HTTP clients a bench could use — `node:http` with a keep-alive Agent (what
 * `runLoad` uses) and global `fetch` (undici) — against one small loopback server in a child process,
 * 8 concurrent clients, bounded count. Prints requests/s and client CPU per request.
 * Run: `node --import tsx bench/lib/http-compare.ts`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { runLoad } from './http-load.ts';
import { fmt, table } from './stats.ts';

const SERVER = `
const http = require('node:http');
const body = JSON.stringify({ beliefs: [{ subject: 'alice', predicate: 'lives_in', value: 'lisbon' }] });
const s = http.createServer((req, res) => { req.resume(); req.on('end', () => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }); res.end(body); }); });
s.keepAliveTimeout = 10000;
s.listen(0, '127.0.0.1', () => console.log(s.address().port));
`;

const CONCURRENCY = 8;
const REQUESTS = 40_000;

async function viaFetch(url: string): Promise<{ perSecond: number; cpuUsPerReq: number }> {
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        next++;
        const r = await fetch(`${url}/v1/memories?subject=alice&predicate=lives_in`);
        await r.text();
      }
    }),
  );
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { perSecond: (REQUESTS / ms) * 1000, cpuUsPerReq: (cpu.user + cpu.system) / REQUESTS };
}

async function viaHttp(url: string): Promise<{ perSecond: number; cpuUsPerReq: number }> {
  const cpu0 = process.cpuUsage();
  const r = await runLoad({
    url,
    concurrency: CONCURRENCY,
    maxRequests: REQUESTS,
    maxMs: 60_000,
    request: () => ({ method: 'GET', path: '/v1/memories?subject=alice&predicate=lives_in' }),
  });
  const cpu = process.cpuUsage(cpu0);
  return { perSecond: r.perSecond, cpuUsPerReq: (cpu.user + cpu.system) / r.requests };
}

const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
try {
  const [port] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  const url = `http://127.0.0.1:${port.trim()}`;
  const rows: string[][] = [['client', 'req/s', 'client CPU us/req']];
  // Warm both once, then measure twice each, alternating.
  await viaHttp(url);
  await viaFetch(url);
  for (let round = 0; round < 2; round++) {
    const h = await viaHttp(url);
    rows.push([`node:http keep-alive #${round + 1}`, fmt(h.perSecond), fmt(h.cpuUsPerReq)]);
    const f = await viaFetch(url);
    rows.push([`fetch (undici) #${round + 1}`, fmt(f.perSecond), fmt(f.cpuUsPerReq)]);
  }
  console.log(table(rows));
} finally {
  child.kill('SIGTERM');
}

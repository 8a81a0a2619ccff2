/**
 * @module
 * Test helper: seeded, reproducible HTTP fuzzing over raw sockets. `fuzzCases` makes requests from
 * route templates (random methods, mangled paths, percent-escapes, headers, bodies, framing); `sendRaw`
 * writes one as bytes and reads the status line. Used by the fuzz tests of the memory server and of
 * the local identity authority. A failing case prints its seed and index so it can be replayed.
 */
import { connect } from 'node:net';

/** A small fast PRNG (mulberry32): the same seed gives the same cases on every machine. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What to fuzz. */
export interface FuzzTarget {
  /** Route paths; `{x}` parts are replaced by random segments. */
  paths: string[];
  /** Header lines sent with most cases (e.g. a valid `authorization`). */
  goodHeaders: Record<string, string>;
  /** Valid bodies to mutate. */
  bodies: unknown[];
}

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'FOO', 'get'];
const SEGMENTS = [
  '%E0%A4%A',
  '%',
  '%zz',
  '%00',
  '..',
  '%2e%2e',
  '\u00e9',
  '%F0%9F%98%80',
  '%ED%A0%80',
  'a'.repeat(300),
  'x:y',
  'agents:run-1',
  '*',
  '',
  ';',
  '%2F',
  'null',
  '-1',
  '0',
];
const CONTENT_TYPES = [
  'application/json',
  'application/x-ndjson',
  'text/plain',
  'application/octet-stream',
  'application/json; charset=latin1',
  'multipart/form-data; boundary=x',
  '',
];

function pick<T>(rand: () => number, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length)] as T;
}

/** A random JSON-ish value, mutated from `base` or made from scratch. */
function mutate(rand: () => number, base: unknown, depth = 0): unknown {
  const r = rand();
  if (depth > 3 || r < 0.15) {
    return pick(rand, [null, true, 0, -1, 1e308, '', '\ud800 x', 'x'.repeat(10_000), [], {}, '2026-13-45', 'NaN']);
  }
  if (Array.isArray(base)) return base.map((v) => mutate(rand, v, depth + 1)).slice(0, 1 + Math.floor(rand() * 3));
  if (base && typeof base === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(base)) {
      if (rand() < 0.15) continue;
      out[rand() < 0.05 ? `${k}_` : k] = rand() < 0.4 ? mutate(rand, v, depth + 1) : v;
    }
    if (rand() < 0.1) Object.defineProperty(out, '__proto__', { value: { admin: true }, enumerable: true });
    return out;
  }
  return base;
}

function body(rand: () => number, target: FuzzTarget): Buffer {
  const r = rand();
  if (r < 0.1) return Buffer.alloc(0);
  if (r < 0.2) return Buffer.from([0xff, 0xfe, 0x00, 0x7b, 0x22]);
  if (r < 0.3) return Buffer.from('{"a":'.repeat(50));
  if (r < 0.35) return Buffer.from('null');
  if (r < 0.45) {
    const line = JSON.stringify(mutate(rand, pick(rand, target.bodies)));
    return Buffer.from(`${line}\n${line}\n{bad\n`);
  }
  return Buffer.from(JSON.stringify(mutate(rand, pick(rand, target.bodies))) ?? 'null');
}

function path(rand: () => number, target: FuzzTarget): string {
  let p = pick(rand, target.paths).replace(/\{[a-z]+\}/g, () => pick(rand, SEGMENTS));
  if (rand() < 0.2) p += `/${pick(rand, SEGMENTS)}`;
  if (rand() < 0.3) {
    const k = pick(rand, ['namespace', 'tenant', 'q', 'as_of', 'limit', 'since', 'subject', 'x', '%E0']);
    p += `?${k}=${pick(rand, SEGMENTS)}${rand() < 0.3 ? `&${k}=2` : ''}`;
  }
  if (rand() < 0.05) p = `//${p}`;
  if (rand() < 0.03) p = `http://127.0.0.1${p}`;
  if (rand() < 0.03) p = '*';
  return p;
}

/** Builds `count` raw requests from `seed`. */
export function fuzzCases(seed: number, count: number, target: FuzzTarget): Buffer[] {
  const rand = seededRandom(seed);
  const cases: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const method = pick(rand, METHODS);
    const b = rand() < 0.7 ? body(rand, target) : Buffer.alloc(0);
    const lines = [`${method} ${path(rand, target)} HTTP/1.1`, 'host: 127.0.0.1', 'connection: close'];
    if (rand() < 0.85) for (const [k, v] of Object.entries(target.goodHeaders)) lines.push(`${k}: ${v}`);
    else if (rand() < 0.5)
      lines.push(`authorization: ${pick(rand, ['Bearer', 'Bearer x', 'Basic a', 'Bearer \u00ff'])}`);
    const ct = pick(rand, CONTENT_TYPES);
    if (ct) lines.push(`content-type: ${ct}`);
    const framing = rand();
    if (framing < 0.7) lines.push(`content-length: ${b.length}`);
    else if (framing < 0.8) lines.push('transfer-encoding: chunked');
    else if (framing < 0.85) lines.push(`content-length: ${b.length}`, 'transfer-encoding: chunked');
    else if (framing < 0.9) lines.push(`content-length: ${b.length + 5}`);
    else if (framing < 0.93) lines.push('content-length: -1');
    if (rand() < 0.1) lines.push(`x-${pick(rand, ['a', 'b'])}: ${'v'.repeat(Math.floor(rand() * 2000))}`);
    if (rand() < 0.05) lines.push('expect: 100-continue');
    const chunked = lines.includes('transfer-encoding: chunked');
    const payload =
      chunked && b.length > 0
        ? Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n0\r\n\r\n')])
        : chunked
          ? Buffer.from('0\r\n\r\n')
          : b;
    cases.push(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]));
  }
  return cases;
}

/**
 * Writes one raw request and reads the answer's status.
 * @returns the final status code (0 when the server closed without a status line: it may refuse bytes
 *   so), the whole text read, and the final answer's body
 */
export function sendRaw(
  port: number,
  request: Buffer,
  timeoutMs = 5000,
): Promise<{ status: number; text: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer in time'));
    }, timeoutMs);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => {}); // a reset after a refusal: the status read so far counts
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      // skip interim answers (100 Continue): the final answer is the one that counts
      const final = text.replace(/^(?:HTTP\/1\.[01] 1\d\d [^\r]*\r\n(?:[^\r]+\r\n)*\r\n)+/, '');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(final);
      const at = final.indexOf('\r\n\r\n');
      // the first answer's body only: bytes left over from a refused request may bring a second one
      const length = /\r\ncontent-length: *(\d+)/i.exec(final.slice(0, at));
      const rest = at < 0 ? '' : final.slice(at + 4);
      resolve({ status: m ? Number(m[1]) : 0, text, body: length ? rest.slice(0, Number(length[1])) : rest });
    });
    socket.end(request);
  });
}

/**
 * @module
 * Readiness checks of a local instance: free-port picking (a port leased to one starting instance of this
 * process at a time), then polling until the port accepts connections (or an HTTP path answers 2xx). No process
 * handling here. Used by local-runtime.ts.
 */
import { request } from 'node:http';
import { connect, createServer } from 'node:net';
import { PROBE_HEADER } from '../runtime.ts';

/** A free TCP port on 127.0.0.1 (the OS picks; released before returning). */
export function pickFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Ports leased to instances of this process (every runtime in it) that may not listen on them yet. */
const leased = new Set<number>();

/** A port leased to one starting instance: `release` once it listens on it (or never will). */
export interface PortLease {
  port: number;
  release(): void;
}

/**
 * A free port for a new instance that no other starting instance of this process holds. The OS frees a picked
 * port at once and may offer it again before the app listens on it: two instances starting together would then
 * share it, one fails to listen, and the other's readiness probe (a connect) is answered by the first — its
 * session would be served by another session's process (two gateways in one process, or one starting several).
 * @param pick the OS pick @default pickFreePort
 */
export async function leasePort(pick: () => Promise<number> = pickFreePort): Promise<PortLease> {
  for (let tries = 0; tries < 100; tries++) {
    const port = await pick();
    if (leased.has(port)) continue;
    leased.add(port);
    return { port, release: () => leased.delete(port) };
  }
  throw new Error('no free port: every port offered is leased to a starting instance');
}

/** True when a TCP connection to host:port succeeds. */
export function probeTcp(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** True when `GET path` answers 2xx within 1 s. */
export function probeHttp(host: string, port: number, path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const headers = { [PROBE_HEADER]: 'readiness' };
    const req = request({ host, port, path, method: 'GET', agent: false, timeout: 1000, headers }, (res) => {
      res.resume();
      resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300);
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
    req.end();
  });
}

/** Options of `waitReady`. */
export interface WaitReadyOptions {
  host: string;
  port: number;
  /** HTTP readiness path; TCP connect when absent. */
  path?: string;
  /** Give up after this many ms. */
  timeoutMs: number;
  /** Stops waiting early (the process exited). */
  signal: AbortSignal;
}

/**
 * Polls until ready: every 5 ms during the first second (a refused loopback connect costs microseconds,
 * and cold start is a headline figure), then every 25 ms.
 * @returns true when ready, false on timeout or abort
 */
export async function waitReady(o: WaitReadyOptions): Promise<boolean> {
  const start = Date.now();
  const deadline = start + o.timeoutMs;
  while (!o.signal.aborted && Date.now() < deadline) {
    const ok = o.path ? await probeHttp(o.host, o.port, o.path) : await probeTcp(o.host, o.port);
    if (ok) return !o.signal.aborted;
    const delay = Date.now() - start < 1000 ? 5 : 25;
    await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(1, deadline - Date.now()))));
  }
  return false;
}

/**
 * @module
 * Serves the local identity authority as the few Kubernetes API endpoints the memory server reads
 * (TokenReview create; get pod, sandbox, sandboxclaim; list + watch sandboxclaims), on loopback, behind a random bearer token, and
 * writes a kubeconfig for it. Plain HTTP on 127.0.0.1 (the kubeconfig marks TLS checks skipped,
 * which client-node 1.x needs for http). Anything else answers a Kubernetes `Status` 404/403; bad input
 * (a malformed escape, a TokenReview that is not an object) a `Status` 400: no request can crash it.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { stringify } from 'yaml';
import { writePrivateFile } from '../../common/private-files.ts';
import type { KubeObject } from '../../kube/types.ts';
import type { LocalIdentityAuthority } from './authority.ts';

const MAX_BODY = 64 * 1024;
const CLAIMS_PATH = /^\/apis\/extensions\.agents\.x-k8s\.io\/v1beta1\/namespaces\/([^/]+)\/sandboxclaims$/;
const GET_PATHS: [RegExp, 'pod' | 'sandbox' | 'claim'][] = [
  [/^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)$/, 'pod'],
  [/^\/apis\/agents\.x-k8s\.io\/v1beta1\/namespaces\/([^/]+)\/sandboxes\/([^/]+)$/, 'sandbox'],
  [/^\/apis\/extensions\.agents\.x-k8s\.io\/v1beta1\/namespaces\/([^/]+)\/sandboxclaims\/([^/]+)$/, 'claim'],
];

/** A running authority API. */
export interface AuthorityApiServer {
  url: string;
  /** Path of the kubeconfig the memory server is given. */
  kubeconfigPath: string;
  close(): Promise<void>;
}

function status(res: http.ServerResponse, code: number, reason: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }));
}

function send(res: http.ServerResponse, obj: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(obj));
}

/** A client's mistake, answered as a Kubernetes `Status` 400 (never thrown past the request). */
class BadRequest extends Error {}

/** A path segment decoded, or a 400 for a malformed percent-escape (`%E0%A4%A`). */
function decodeSegment(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new BadRequest('malformed percent-encoding in the path');
  }
}

/** The spec of a TokenReview body, checked field by field as the API server does. */
function reviewSpec(body: string): { token: string; audiences: string[] } {
  let review: unknown;
  try {
    review = JSON.parse(body);
  } catch {
    throw new BadRequest('malformed TokenReview: the body is not JSON');
  }
  if (typeof review !== 'object' || review === null || Array.isArray(review)) {
    throw new BadRequest('malformed TokenReview: the body must be an object');
  }
  const spec = (review as { spec?: unknown }).spec ?? {};
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw new BadRequest('malformed TokenReview: spec must be an object');
  }
  const { token = '', audiences = [] } = spec as { token?: unknown; audiences?: unknown };
  if (typeof token !== 'string') throw new BadRequest('malformed TokenReview: spec.token must be a string');
  if (!Array.isArray(audiences) || !audiences.every((a) => typeof a === 'string')) {
    throw new BadRequest('malformed TokenReview: spec.audiences must be a list of strings');
  }
  return { token, audiences };
}

/** Reads a body of at most MAX_BODY bytes; past it answers 413 and resolves null. */
function readBody(req: http.IncomingMessage, res: http.ServerResponse): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        status(res, 413, 'RequestEntityTooLarge', 'request body too large');
        req.destroy();
        resolve(null);
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(size > MAX_BODY ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(null));
  });
}

/** Answers one request; every error ends as a `Status` (400 for bad input, 500 otherwise), never a crash. */
async function handle(
  authority: LocalIdentityAuthority,
  expected: Buffer,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const given = Buffer.from(req.headers.authorization ?? '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    status(res, 401, 'Unauthorized', 'Unauthorized');
    return;
  }
  const path = (req.url ?? '/').split('?')[0] as string;
  if (req.method === 'POST' && path === '/apis/authentication.k8s.io/v1/tokenreviews') {
    const body = await readBody(req, res);
    if (body === null) return;
    const spec = reviewSpec(body);
    const s = await authority.review(spec.token, spec.audiences);
    send(res, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {}, spec, status: s });
    return;
  }
  const claims = req.method === 'GET' ? CLAIMS_PATH.exec(path) : null;
  if (claims) {
    serveClaims(authority, decodeSegment(claims[1] as string), req, res);
    return;
  }
  if (req.method === 'GET') {
    for (const [re, kind] of GET_PATHS) {
      const m = re.exec(path);
      if (!m) continue;
      const [ns, name] = [decodeSegment(m[1] as string), decodeSegment(m[2] as string)];
      const obj: KubeObject | null =
        kind === 'pod'
          ? authority.pod(ns, name)
          : kind === 'sandbox'
            ? authority.sandbox(ns, name)
            : authority.claim(ns, name);
      if (obj) send(res, obj);
      else status(res, 404, 'NotFound', `${kind} "${name.slice(0, 253)}" not found`);
      return;
    }
  }
  status(res, 403, 'Forbidden', 'the local authority serves identity lookups only');
}

/** List or watch (from a resourceVersion; 410 in an ERROR event when too old) the claims of a namespace. */
function serveClaims(
  authority: LocalIdentityAuthority,
  namespace: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): void {
  const query = new URL(req.url ?? '/', 'http://x').searchParams;
  const feed = authority.claims;
  if (query.get('watch') !== 'true' && query.get('watch') !== '1') {
    send(res, {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxClaimList',
      metadata: { resourceVersion: String(feed.resourceVersion) },
      items: feed.list(namespace),
    });
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  const write = (type: string, object: unknown) => res.write(`${JSON.stringify({ type, object })}\n`);
  const rv = query.get('resourceVersion');
  const since = rv && rv !== '0' ? Number(rv) : feed.resourceVersion;
  const backlog = Number.isInteger(since) ? feed.since(namespace, since) : 'gone';
  if (backlog === 'gone') {
    write('ERROR', {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Expired',
      code: 410,
      message: 'too old resource version',
    });
    res.end();
    return;
  }
  if (!rv || rv === '0') for (const c of feed.list(namespace)) write('ADDED', c);
  for (const e of backlog) write(e.type, e.object);
  const stop = feed.subscribe((e) => {
    if (e.rv > since && e.object.metadata.namespace === namespace) write(e.type, e.object);
  });
  res.once('close', stop);
}

/**
 * Starts the API on 127.0.0.1 and writes its kubeconfig to `kubeconfigPath` (mode 0600).
 * @param port 0 picks a free port
 */
export async function startAuthorityApi(
  authority: LocalIdentityAuthority,
  options: { kubeconfigPath: string; port?: number },
): Promise<AuthorityApiServer> {
  const bearer = randomBytes(32).toString('hex');
  const expected = Buffer.from(`Bearer ${bearer}`);
  const server = http.createServer((req, res) => {
    // This process is also the memory server and the gateway under `tether up`: a request that
    // threw here used to end all three (issue 9, item 7).
    handle(authority, expected, req, res).catch((err: unknown) => {
      if (err instanceof BadRequest) status(res, 400, 'BadRequest', err.message);
      else status(res, 500, 'InternalError', 'the local authority failed to answer');
    });
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'tether-local', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'tether-memory', user: { token: bearer } }],
    contexts: [{ name: 'tether-local', context: { cluster: 'tether-local', user: 'tether-memory' } }],
    'current-context': 'tether-local',
  };
  writePrivateFile(options.kubeconfigPath, stringify(kubeconfig));
  return {
    url,
    kubeconfigPath: options.kubeconfigPath,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

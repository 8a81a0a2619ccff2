/**
 * @module
 * The object endpoints of the API-server double, in the real wire format: get, list (a `...List` with
 * the store's resourceVersion), watch (newline-delimited events from a resourceVersion; an ERROR event with
 * a 410 `Expired` Status when it is too old), create (201; 409 AlreadyExists), update (409 Conflict on a
 * stale resourceVersion), patch (`patch.ts`), delete, and the `/status` subresource; a custom kind's `spec` is
 * validated against its CRD schema (`crd-schemas.ts`: 422 Invalid naming the field). RBAC is checked by the
 * caller's `allowed`. Used by `double.ts`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  apiVersionOf,
  POD,
  type ResourceType,
  SANDBOX,
  SANDBOX_CLAIM,
  SANDBOX_TEMPLATE,
  SANDBOX_WARM_POOL,
} from '../../src/kube/agent-sandbox.ts';
import { applyCrdSchema, crdViolation } from './crd-schemas.ts';
import { matcher, type ObjectStore, resourceOf, type Selector } from './object-store.ts';
import { generateName, notFoundStatus, statusBody, type WireObject } from './objects.ts';
import { applyPatch } from './patch.ts';

/** Kinds the double serves. */
export const SERVED_TYPES: readonly ResourceType[] = [POD, SANDBOX, SANDBOX_CLAIM, SANDBOX_WARM_POOL, SANDBOX_TEMPLATE];

/** Verbs as RBAC names them. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** A parsed object request. */
export interface ObjectRequest {
  verb: Verb;
  type: ResourceType;
  namespace: string;
  name?: string;
  /** True for `/status`. */
  status: boolean;
}

/** An answer: HTTP status and JSON body; a watch answers by itself (`body` undefined). */
export interface Answer {
  status: number;
  body?: unknown;
}

const CORE_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/([^/]+)(?:\/([^/]+))?(\/status)?$/;
const GROUP_PATH = /^\/apis\/([^/]+)\/([^/]+)\/namespaces\/([^/]+)\/([^/]+)(?:\/([^/]+))?(\/status)?$/;

/** The object request a method + path names, or null when the path is not an object path the double serves. */
export function parseObjectRequest(method: string, path: string, query: URLSearchParams): ObjectRequest | null {
  const core = CORE_PATH.exec(path);
  const group = core ? null : GROUP_PATH.exec(path);
  let type: ResourceType | undefined;
  let namespace: string | undefined;
  let name: string | undefined;
  let status = false;
  if (core) {
    type = SERVED_TYPES.find((t) => t.group === '' && t.plural === core[2]);
    [namespace, name, status] = [core[1], core[3], core[4] !== undefined];
  } else if (group) {
    type = SERVED_TYPES.find((t) => t.group === group[1] && t.version === group[2] && t.plural === group[4]);
    [namespace, name, status] = [group[3], group[5], group[6] !== undefined];
  }
  if (!type || !namespace) return null;
  const verb = verbOf(method, name !== undefined, query.get('watch'));
  if (!verb) return null;
  return { verb, type, namespace, name, status };
}

function verbOf(method: string, named: boolean, watch: string | null): Verb | null {
  if (method === 'GET') return named ? 'get' : watch === 'true' || watch === '1' ? 'watch' : 'list';
  if (method === 'POST' && !named) return 'create';
  if (!named) return null;
  return method === 'PUT' ? 'update' : method === 'PATCH' ? 'patch' : method === 'DELETE' ? 'delete' : null;
}

/**
 * Serves one object request (RBAC already checked).
 * @param watches open watch responses, so an outage or `close()` can end them
 */
export function serveObject(
  store: ObjectStore,
  r: ObjectRequest,
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
  query: URLSearchParams,
  watches: Set<ServerResponse>,
): Answer {
  const selector: Selector = {
    namespace: r.namespace,
    labelSelector: query.get('labelSelector') ?? undefined,
    fieldSelector: query.get('fieldSelector') ?? undefined,
  };
  try {
    matcher(selector);
  } catch (err) {
    return { status: 400, body: statusBody(400, 'BadRequest', (err as Error).message) };
  }
  switch (r.verb) {
    case 'get': {
      const obj = store.get(r.type, r.namespace, r.name!);
      return obj ? { status: 200, body: obj } : notFound(r);
    }
    case 'list':
      return {
        status: 200,
        body: {
          apiVersion: apiVersionOf(r.type),
          kind: `${r.type.kind}List`,
          metadata: { resourceVersion: String(store.resourceVersion) },
          items: store.list(r.type, selector),
        },
      };
    case 'watch':
      watch(store, r.type, selector, query, res, watches);
      return { status: 200 };
    case 'create':
      return create(store, r, body, query);
    case 'update':
    case 'patch':
      return change(store, r, req, body);
    case 'delete': {
      const gone = store.delete(r.type, r.namespace, r.name!);
      if (!gone) return notFound(r);
      // Core kinds answer with the object; custom resources with a Status.
      if (r.type.group === '') return { status: 200, body: gone };
      return {
        status: 200,
        body: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Success',
          details: { name: r.name, group: r.type.group, kind: r.type.plural, uid: gone.metadata.uid },
        },
      };
    }
  }
}

function notFound(r: ObjectRequest): Answer {
  return { status: 404, body: notFoundStatus(r.type, r.name ?? '') };
}

function parse(body: string): WireObject | null {
  try {
    const v = JSON.parse(body);
    return v && typeof v === 'object' && v.metadata && typeof v.metadata === 'object' ? v : null;
  } catch {
    return null;
  }
}

function create(store: ObjectStore, r: ObjectRequest, body: string, query: URLSearchParams): Answer {
  const obj = parse(body);
  if (!obj)
    return { status: 400, body: statusBody(400, 'BadRequest', 'the body of the request was in an unknown format') };
  if (obj.apiVersion !== apiVersionOf(r.type) || obj.kind !== r.type.kind) {
    return {
      status: 400,
      body: statusBody(
        400,
        'BadRequest',
        `the API version in the data (${obj.apiVersion}) does not match the expected`,
      ),
    };
  }
  const meta = obj.metadata as WireObject['metadata'] & { generateName?: string };
  if (meta.namespace !== undefined && meta.namespace !== r.namespace) {
    return {
      status: 400,
      body: statusBody(
        400,
        'BadRequest',
        'the namespace of the provided object does not match the namespace sent on the request',
      ),
    };
  }
  if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName);
  if (!meta.name) return invalid(r, 'metadata.name: Required value: name or generateName is required');
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(meta.name)) {
    return invalid(
      r,
      `metadata.name: Invalid value: "${meta.name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'`,
    );
  }
  meta.namespace = r.namespace;
  meta.uid = '';
  meta.resourceVersion = '';
  meta.creationTimestamp = '';
  // Custom resources with a status subresource drop `status` on create.
  if (r.type.group !== '') delete obj.status;
  const violation = crdViolation(r.type, obj);
  if (violation) return invalid(r, violation);
  if (query.get('dryRun') === 'All') return { status: 201, body: applyCrdSchema(r.type, obj) };
  const stored = store.create(r.type, obj);
  if (!stored) {
    return {
      status: 409,
      body: statusBody(409, 'AlreadyExists', `${resourceOf(r.type)} "${meta.name}" already exists`, {
        name: meta.name,
        ...(r.type.group ? { group: r.type.group } : {}),
        kind: r.type.plural,
      }),
    };
  }
  return { status: 201, body: stored };
}

function change(store: ObjectStore, r: ObjectRequest, req: IncomingMessage, body: string): Answer {
  const current = store.get(r.type, r.namespace, r.name!);
  if (!current) return notFound(r);
  let next: WireObject;
  if (r.verb === 'patch') {
    const out = applyPatch(current, req.headers['content-type'] ?? '', body, r.type.group !== '');
    if (!out.ok) return { status: out.status, body: statusBody(out.status, out.reason, out.message) };
    next = out.doc as WireObject;
  } else {
    const obj = parse(body);
    if (!obj)
      return { status: 400, body: statusBody(400, 'BadRequest', 'the body of the request was in an unknown format') };
    next = obj;
  }
  if (!next.metadata || next.metadata.name !== r.name || (next.metadata.namespace ?? r.namespace) !== r.namespace) {
    return invalid(r, 'metadata.name: Invalid value: the name of the object does not match the name on the URL');
  }
  const rv = next.metadata.resourceVersion;
  if (
    (r.verb === 'update' && rv !== current.metadata.resourceVersion) ||
    (rv && rv !== current.metadata.resourceVersion)
  ) {
    return {
      status: 409,
      body: statusBody(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${resourceOf(r.type)} "${r.name}": the object has been modified; please apply your changes to the latest version and try again`,
        { name: r.name, ...(r.type.group ? { group: r.type.group } : {}), kind: r.type.plural },
      ),
    };
  }
  next.metadata.namespace = r.namespace;
  // The main resource ignores status changes, the /status subresource everything else (custom resources).
  if (r.type.group !== '') {
    if (r.status) next = { ...current, status: next.status };
    else next = { ...next, ...(current.status === undefined ? {} : { status: current.status }) };
    if (!r.status && next.status === undefined) delete next.status;
  }
  const violation = crdViolation(r.type, next);
  if (violation) return invalid(r, violation);
  const stored = store.update(r.type, next);
  return stored ? { status: 200, body: stored } : notFound(r);
}

function invalid(r: ObjectRequest, message: string): Answer {
  return {
    status: 422,
    body: statusBody(422, 'Invalid', `${r.type.kind} "${r.name ?? ''}" is invalid: ${message}`, {
      name: r.name,
      ...(r.type.group ? { group: r.type.group } : {}),
      kind: r.type.kind,
    }),
  };
}

/** Streams watch events: from `resourceVersion`, or (none or "0") ADDED for every object, then changes. */
function watch(
  store: ObjectStore,
  type: ResourceType,
  selector: Selector,
  query: URLSearchParams,
  res: ServerResponse,
  watches: Set<ServerResponse>,
): void {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache' });
  res.flushHeaders();
  const send = (type: string, object: unknown) => res.write(`${JSON.stringify({ type, object })}\n`);
  const rvText = query.get('resourceVersion');
  const match = matcher(selector);
  let since: number;
  if (!rvText || rvText === '0') {
    since = store.resourceVersion;
    for (const o of store.list(type, selector)) send('ADDED', o);
  } else {
    since = Number(rvText);
    const backlog = Number.isInteger(since) ? store.eventsSince(type, since, selector) : 'gone';
    if (backlog === 'gone') {
      send('ERROR', statusBody(410, 'Expired', `too old resource version: ${rvText} (${store.resourceVersion})`));
      res.end();
      return;
    }
    for (const e of backlog) send(e.type, e.object);
  }
  const resource = resourceOf(type);
  const unsubscribe = store.subscribe((e) => {
    if (e.rv > since && e.resource === resource && match(e.object)) send(e.type, e.object);
  });
  watches.add(res);
  const timeout = Number(query.get('timeoutSeconds') ?? 0);
  const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
  res.once('close', () => {
    clearTimeout(timer);
    unsubscribe();
    watches.delete(res);
  });
}

/**
 * @module
 * `/openapi.json` against the routes the server actually registered: every route is documented with its
 * query, path and body schemas and exactly the response codes it declares (201 and 204 where sent), and
 * the document lists nothing that is not a route. The exchange route is registered as `tether memory` does.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { kubernetesPlugins } from '../../src/cli/kubernetes-option.ts';
import { silentLogger } from '../../src/common/log.ts';
import type { RegisteredRoute } from '../../src/server/app.ts';
import { kubeFlags } from '../helpers/kube-flags.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

let srv: TestMemoryServer;
let doc: any;
let routes: readonly RegisteredRoute[];

before(async () => {
  srv = await startTestMemoryServer({
    plugins: kubernetesPlugins(kubeFlags('/nonexistent/kubeconfig', { kubeconfig: undefined }), silentLogger()),
  });
  routes = srv.running.server.routes;
  const r = await srv.call('GET', '/openapi.json');
  assert.equal(r.status, 200);
  doc = r.body;
});
after(() => srv.close());

/** `/v1/keys/:id` -> `/v1/keys/{id}`. */
const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');
const keysOf = (schema: unknown) => (schema instanceof z.ZodObject ? Object.keys(schema.shape).sort() : []);
const operation = (r: RegisteredRoute) => doc.paths[openApiPath(r.url)]?.[r.method.toLowerCase()];

describe('GET /openapi.json', () => {
  it('is OpenAPI 3.1 with bearer auth', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(doc.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer' });
  });

  it('documents every registered route, and only those', () => {
    assert.ok(routes.length >= 20, `only ${routes.length} routes`);
    for (const r of routes) assert.ok(operation(r), `${r.method} ${r.url} is not in the document`);
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const registered = new Set(routes.map((r) => `${r.method} ${openApiPath(r.url)}`));
    for (const d of documented) assert.ok(registered.has(d), `${d} is documented but not a route`);
  });

  it('gives each route its declared response codes, plus the error answer', () => {
    for (const r of routes) {
      const declared = Object.keys((r.schema?.response as object | undefined) ?? {});
      assert.ok(declared.length > 0, `${r.method} ${r.url} declares no response`);
      assert.deepEqual(Object.keys(operation(r).responses).sort(), [...declared, 'default'].sort(), r.url);
      assert.equal(operation(r).responses.default.content['application/json'].schema.required[0], 'error');
    }
  });

  it('lists the query and path parameters each route validates', () => {
    for (const r of routes) {
      const params = (operation(r).parameters ?? []) as { name: string; in: string }[];
      const names = (where: string) =>
        params
          .filter((p) => p.in === where)
          .map((p) => p.name)
          .sort();
      assert.deepEqual(names('query'), keysOf(r.schema?.querystring), `${r.method} ${r.url} query`);
      assert.deepEqual(names('path'), keysOf(r.schema?.params), `${r.method} ${r.url} path`);
    }
    const keyList = doc.paths['/v1/keys'].get.parameters.map((p: { name: string }) => p.name).sort();
    assert.deepEqual(keyList, ['after', 'include_expired', 'limit']);
  });

  it('has a request body exactly where the route validates one', () => {
    for (const r of routes) {
      assert.equal(!!operation(r).requestBody, !!r.schema?.body, `${r.method} ${r.url} body`);
    }
    const remember = doc.paths['/v1/memories'].post.requestBody.content['application/json'].schema;
    assert.equal(remember.anyOf.length, 2, 'one statement or a batch');
    assert.ok(doc.paths['/v1/events/import'].post.requestBody.content['application/x-ndjson']);
    assert.deepEqual(doc.paths['/v1/namespaces/{ns}'].delete.parameters[0].name, 'ns');
  });

  it('documents 201 for a minted key and 204 without content for a revoke', () => {
    assert.ok(doc.paths['/v1/keys'].post.responses['201'].content['application/json'].schema.properties.key);
    assert.equal(doc.paths['/v1/keys'].post.responses['200'], undefined);
    assert.ok(doc.paths['/v1/keys/{id}'].delete.responses['204']);
    assert.equal(doc.paths['/v1/keys/{id}'].delete.responses['204'].content, undefined);
  });

  it('needs no key for the public routes and a bearer key for the rest', () => {
    for (const r of routes) {
      const security = operation(r).security;
      if (r.public) assert.deepEqual(security, [], r.url);
      else assert.equal(security, undefined, `${r.url} inherits bearer`);
    }
    assert.deepEqual(doc.paths['/v1/auth/kubernetes'].post.security, []);
  });
});

describe('documented codes are the codes sent', () => {
  it('mints with 201 and revokes with 204', async () => {
    const minted = await srv.call('POST', '/v1/keys', { key: srv.adminKey, body: { tenant: 'acme', agent: 'a' } });
    assert.equal(minted.status, 201);
    const revoked = await srv.call('DELETE', `/v1/keys/${minted.body.id}`, { key: srv.adminKey });
    assert.equal(revoked.status, 204);
    assert.equal(revoked.text, '');
  });
});

/**
 * The light-lane hooks (`light-lane.ts`) on a small Fastify app, through `inject()`: a request counts
 * as light while it is handled and not after its answer; one that spends a time slice (owned by its
 * `req.lane`) stops counting from then on; a hijacked answer (as MCP's) ends its ticket when the
 * response closes; an aborted one too; the auth hook hands each request its ticket in its own context.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import type { AuthContext } from '../../src/auth/auth-context.ts';
import { lightInFlight, type Ticket } from '../../src/common/light-first.ts';
import { TimeSlice } from '../../src/common/time-slice.ts';
import { authPlugin } from '../../src/server/auth-plugin.ts';
import { installLightLane } from '../../src/server/light-lane.ts';

async function appWithRoutes() {
  const app = Fastify();
  installLightLane(app);
  const seen: Record<string, number[]> = {};
  app.post('/small', async () => {
    seen.small = [lightInFlight()];
    return { ok: true };
  });
  app.post('/big', async (req) => {
    const before = lightInFlight();
    const slice = new TimeSlice(req.lane, 1);
    await slice.yield();
    seen.big = [before, lightInFlight()];
    return { ok: true };
  });
  app.get('/stream', (_req, reply) => {
    reply.hijack();
    seen.stream = [lightInFlight()];
    reply.raw.writeHead(200, { 'content-type': 'text/plain' });
    reply.raw.end('done');
  });
  await app.ready();
  return { app, seen };
}

describe('light lane', () => {
  it('counts a request as light while it is handled, and not after its answer', async (t) => {
    const { app, seen } = await appWithRoutes();
    t.after(() => app.close());
    const base = lightInFlight();
    const res = await app.inject({ method: 'POST', url: '/small', payload: {} });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(seen.small, [base + 1]);
    assert.equal(lightInFlight(), base);
  });

  it('stops counting a request once it spends a time slice', async (t) => {
    const { app, seen } = await appWithRoutes();
    t.after(() => app.close());
    const base = lightInFlight();
    const res = await app.inject({ method: 'POST', url: '/big', payload: {} });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(seen.big, [base + 1, base]);
    assert.equal(lightInFlight(), base);
  });

  it('ends the ticket of a hijacked answer when its response closes', async (t) => {
    const { app, seen } = await appWithRoutes();
    t.after(() => app.close());
    const base = lightInFlight();
    const res = await app.inject({ method: 'GET', url: '/stream' });
    assert.equal(res.body, 'done');
    assert.deepEqual(seen.stream, [base + 1]);
    assert.equal(lightInFlight(), base);
  });

  it("hands each request's ticket to the calls in its own auth context, even from a shared verify", async (t) => {
    const app = Fastify();
    installLightLane(app);
    const shared: AuthContext = {
      keyId: 'k1',
      tenant: 'acme',
      agent: 'run-1',
      session: null,
      admin: false,
      namespace: 'acme:run-1',
      expiresAt: null,
    };
    await app.register(authPlugin, { keys: null as never, verify: async () => shared });
    const seen: { same: boolean; ticket: Ticket | null }[] = [];
    app.post('/work', async (req) => {
      seen.push({ same: req.auth.lane === req.lane, ticket: req.lane });
      return { ok: true };
    });
    await app.ready();
    t.after(() => app.close());
    for (let i = 0; i < 2; i++) {
      const res = await app.inject({
        method: 'POST',
        url: '/work',
        payload: {},
        headers: { authorization: 'Bearer x' },
      });
      assert.equal(res.statusCode, 200);
    }
    assert.deepEqual(
      seen.map((s) => s.same),
      [true, true],
    );
    assert.ok(seen[0]?.ticket && seen[1]?.ticket && seen[0].ticket !== seen[1].ticket, 'a ticket per request');
    assert.equal(shared.lane, undefined, 'the shared context is not written to');
  });

  it('ends the ticket of a request whose client went away', async (t) => {
    const app = Fastify();
    installLightLane(app);
    let entered!: (raw: ServerResponse) => void;
    const inHandler = new Promise<ServerResponse>((r) => {
      entered = r;
    });
    let finish!: () => void;
    app.get('/slow', async (_req, reply) => {
      entered(reply.raw);
      await new Promise<void>((r) => {
        finish = r;
      });
      return 'late';
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    t.after(() => app.close());
    const base = lightInFlight();
    const aborter = new AbortController();
    const { port } = app.server.address() as { port: number };
    const res = fetch(`http://127.0.0.1:${port}/slow`, { signal: aborter.signal }).catch(() => null);
    const raw = await inHandler;
    assert.equal(lightInFlight(), base + 1);
    const closed = once(raw, 'close'); // the hook's listener, added first, has run when this resolves
    aborter.abort();
    await res;
    await closed;
    assert.equal(lightInFlight(), base);
    finish();
  });
});

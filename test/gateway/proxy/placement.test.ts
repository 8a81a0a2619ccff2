import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { isTetherError, type TetherError } from '../../../src/common/errors.ts';
import { scanRequestHeaders } from '../../../src/gateway/proxy/headers.ts';
import { type PlacedRequest, Placement, type PlacementContext } from '../../../src/gateway/proxy/placement.ts';
import { Router } from '../../../src/gateway/router.ts';
import { sessionKeyPolicy } from '../../../src/gateway/session-key.ts';
import type { ServiceState, SessionEntry } from '../../../src/gateway/state.ts';
import { hit, type SetupOptions, settle, setupCore } from '../helpers/core-setup.ts';

/** A request placed through the prelude, recording what it was answered. */
class Probe extends Placement {
  readonly answered: Promise<SessionEntry | TetherError>;
  placedIn: SessionEntry | null = null;
  refusal: TetherError | null = null;
  keyedCalls = 0;
  #settle: (v: SessionEntry | TetherError) => void = () => {};

  constructor() {
    super();
    this.answered = new Promise((resolve) => {
      this.#settle = resolve;
    });
  }

  run(ctx: PlacementContext, req: PlacedRequest, closer: EventEmitter | null = null): this {
    this.place(ctx, req, closer);
    return this;
  }

  /** The Set-Cookie of a new session, as the path sends it. */
  get cookie(): string | undefined {
    return this.setCookie;
  }

  get forwarded() {
    return this.newSession;
  }

  done(status: number | undefined): void {
    this.release(status);
  }

  gone(): void {
    this.leave();
  }

  protected override keyed(): void {
    this.keyedCalls++;
  }

  protected override placed(s: SessionEntry): void {
    assert.equal(this.placedIn, null, 'placed once');
    this.placedIn = s;
    this.#settle(s);
  }

  protected override refused(err: unknown): void {
    assert.ok(isTetherError(err), `a TetherError: ${String(err)}`);
    this.refusal = err;
    this.#settle(err);
  }
}

const AFFINITY = { 'serving.knative.dev/session-affinity-cookie': 'app' };

/** A core with one service and the placement context over it. */
function setup(annotations: Record<string, string> = {}, opts: SetupOptions = {}) {
  const c = setupCore({ ...AFFINITY, ...annotations }, opts);
  const ctx: PlacementContext = {
    router: new Router(c.core.services),
    scheduler: c.core.scheduler,
    keys: sessionKeyPolicy(),
  };
  return { ...c, ctx };
}

/** A request to `host` with `headers` (name, value pairs as sent). */
function request(host: string | undefined, headers: string[] = [], http11 = true): PlacedRequest {
  const raw = host === undefined ? headers : ['Host', host, ...headers];
  return { scan: scanRequestHeaders(raw), http11, peer: '127.0.0.1' };
}

describe('Placement.place()', () => {
  it('refuses an unknown host with 404 naming it and the known hosts, before any key is made', async () => {
    const { ctx, svc } = setup();
    const p = new Probe().run(ctx, request('nope.example.com'));
    const err = (await p.answered) as TetherError;
    assert.equal(err.status, 404);
    assert.equal(err.code, 'not_found');
    assert.match(err.message, /no service for host 'nope\.example\.com'; known hosts: /);
    assert.ok(err.message.includes(svc.host));
    assert.equal(p.keyedCalls, 0);
    assert.equal(p.cookie, undefined);
  });

  it('refuses a request with two Host lines, or an HTTP/1.1 one with none, with 400 naming host', async () => {
    const { ctx, svc } = setup();
    const two = new Probe().run(ctx, request(svc.host, ['Host', 'other.example.com']));
    assert.equal(((await two.answered) as TetherError).field, 'host');
    const none = new Probe().run(ctx, request(undefined));
    assert.equal(((await none.answered) as TetherError).status, 400);
    assert.equal(((await none.answered) as TetherError).field, 'host');
  });

  it('answers a queue timeout with 503 and Retry-After', async () => {
    const { ctx, core, svc } = setup({ 'autoscaling.knative.dev/max-scale': '1' }, { queueTimeoutMs: 30 });
    await hit(core, svc, 'a');
    await hit(core, svc, 'a'); // established: it keeps its instance
    const p = new Probe().run(ctx, request(svc.host, ['Cookie', 'app=b']));
    const err = (await p.answered) as TetherError;
    assert.equal(err.status, 503);
    assert.equal(err.code, 'unavailable');
    assert.equal(err.retryAfter, 1);
    assert.equal(svc.queue.length, 0);
  });
});

describe('Placement: the session key', () => {
  /** Places one request to the service and returns its session key once placed. */
  async function keyOf(headers: string[]): Promise<{ key: string; p: Probe; svc: ServiceState }> {
    const { ctx, svc, core } = setup();
    const p = new Probe().run(ctx, request(svc.host, headers));
    await settle(core, svc);
    const s = await p.answered;
    assert.ok(!isTetherError(s), `placed: ${String(s)}`);
    return { key: (s as SessionEntry).key ?? '', p, svc };
  }

  it('comes from the service cookie first', async () => {
    const { key, p } = await keyOf(['Cookie', 'other=1; app=from-cookie', 'X-Session-Key', 'explicit']);
    assert.equal(key, 'from-cookie');
    assert.equal(p.cookie, undefined, 'a known key gets no Set-Cookie');
    assert.equal(p.forwarded, undefined);
  });

  it('comes from X-Session-Key without the cookie', async () => {
    const { key } = await keyOf(['X-Session-Key', 'explicit', 'Authorization', 'Bearer t']);
    assert.equal(key, 'explicit');
  });

  it('is a hash of Authorization without cookie or X-Session-Key', async () => {
    const { key } = await keyOf(['Authorization', 'Bearer token-1']);
    const hash = createHash('sha256').update('Bearer token-1').digest('hex').slice(0, 32);
    assert.equal(key, `auth-${hash}`);
  });

  it('is a new one otherwise: a Set-Cookie for the client and X-Session-Key for the instance', async () => {
    const { key, p, svc } = await keyOf([]);
    assert.equal(p.cookie, `app=${key}; Path=/; HttpOnly; SameSite=Lax`);
    assert.equal(p.forwarded?.sessionKey, key);
    assert.ok(svc.byKey.has(key));
  });

  it('places a known running session at once, in the same tick', async () => {
    const { ctx, core, svc } = setup();
    await hit(core, svc, 'warm');
    const p = new Probe().run(ctx, request(svc.host, ['Cookie', 'app=warm']));
    assert.equal(p.placedIn?.key, 'warm', 'placed synchronously');
    assert.equal(p.placedIn?.inflight, 1);
    p.done(200);
    p.done(200);
    assert.equal(p.placedIn?.inflight, 0, 'released once');
  });
});

describe('Placement: the client leaving while it waits', () => {
  it('leaves the queue, and is neither placed nor answered', async () => {
    const { ctx, core, svc } = setup({ 'autoscaling.knative.dev/max-scale': '1' });
    await hit(core, svc, 'a');
    await hit(core, svc, 'a');
    const res = new EventEmitter();
    const p = new Probe().run(ctx, request(svc.host, ['Cookie', 'app=b']), res);
    await new Promise((r) => setImmediate(r));
    assert.equal(svc.queue.length, 1);
    res.emit('close');
    await settle(core, svc);
    assert.equal(svc.queue.length, 0);
    assert.equal(p.placedIn, null);
    assert.equal(p.refusal, null);
    assert.equal(res.listenerCount('close'), 0, 'the close listener is removed once the wait ended');
  });

  it('gives back a slot that comes after the client left', async () => {
    const { ctx, core, svc, runtime } = setup();
    let open: () => void = () => {};
    runtime.gate = new Promise((r) => {
      open = r;
    });
    const p = new Probe().run(ctx, request(svc.host, ['Cookie', 'app=late']));
    await new Promise((r) => setImmediate(r));
    const s = svc.byKey.get('late');
    assert.ok(s, 'placed on a starting instance');
    assert.equal(s.inflight, 1, 'the waiting request holds a slot');
    p.gone();
    open();
    await settle(core, svc);
    assert.equal(s.inflight, 0, 'the slot was given back');
    assert.equal(s.instance.inflight, 0);
    assert.equal(p.placedIn, null);
    assert.equal(p.refusal, null);
  });
});

describe('Placement.release()', () => {
  it('meters a placed request once: its status class and duration', async () => {
    const { ctx, core, svc } = setup();
    await hit(core, svc, 'm');
    const counted: number[] = [];
    let observed = 0;
    svc.metrics = {
      byClass: [0, 1, 2, 3, 4, 5].map((c) => ({ inc: () => counted.push(c) })),
      duration: { observe: () => observed++ },
    };
    const p = new Probe().run(ctx, request(svc.host, ['Cookie', 'app=m']));
    p.done(404);
    p.done(404);
    assert.deepEqual([counted, observed], [[4], 1]);
    const upgrade = new Probe().run(ctx, request(svc.host, ['Cookie', 'app=m']));
    upgrade.done(undefined);
    assert.deepEqual([counted, observed], [[4], 1], 'an upgrade is not metered');
    assert.equal(upgrade.placedIn?.inflight, 0);
  });
});

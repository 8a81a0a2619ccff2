/**
 * @module
 * The conformance suite of the `InstanceRuntime` port (src/runtime/runtime.ts): the same cases and the same
 * expectations for every runtime — start → ready → serve; pause and resume; delete; list, observed state and
 * adopt across a restart; a start that fails (at once, not at its timeout; `requested` false); an app that
 * exits by itself; an instance ended from outside; what the runtime depends on failing mid-way (Kubernetes:
 * the API server; local: its state folder). Where runtimes truly differ the harness declares it
 * (`RuntimeCapabilities`) and the case checks the declared behaviour; nothing here asks which runtime it is;
 * nothing is skipped. Called by test/runtime/local/conformance.test.ts (plain
 * and isolated) and test/runtime/kubernetes/conformance.test.ts (the API double). Waits on events (onExit,
 * the runtime's own promises); the only polling is the harness's `gone`, with a generous deadline. Requests go
 * only to live instances (loopback, or the network namespace of a live isolated instance).
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { InstanceExit, InstanceRuntime, InstanceSpec, StartedInstance } from '../../src/runtime/runtime.ts';

/** What a runtime documents about itself, checked as documented. */
export interface RuntimeCapabilities {
  /**
   * What pause does to the app: `keeps-process` freezes it (SIGSTOP, cgroup freezer; resume continues the
   * same process with its memory); `drops-process` stops it (a Suspended sandbox has no pod; resume starts a
   * new process, maybe at a new address, its memory gone).
   */
  pause: 'keeps-process' | 'drops-process';
  /** Whether instances outlive `detach()`, so that a new runtime lists and adopts them. */
  adoptsAfterRestart: boolean;
  /** Whether `StartedInstance.pid` is an OS process id (else null). */
  pids: boolean;
  /** Whether `logs()` captures the instance's output (else undefined: the cluster keeps it). */
  logs: boolean;
}

/** One runtime under test, made fresh for each case. */
export interface RuntimeHarness {
  capabilities: RuntimeCapabilities;
  /** A runtime; called again after a restart, it shares the first one's state (records, cluster). */
  open(): Promise<InstanceRuntime>;
  /**
   * A spec (new name each call): `serve` runs the session app (examples/session-app: GET /env answers its pid,
   * a request counter and K_SERVICE); `crash` exits at once with code 3.
   */
  spec(app: 'serve' | 'crash'): InstanceSpec;
  /** Ends a live instance the way this runtime's world does from outside (local: its process killed; Kubernetes: its claim deleted). */
  endOutside(started: StartedInstance): Promise<void>;
  /** Makes the instance's app exit by itself, as a crash or an OOM kill does (local: its process killed; Kubernetes: its container's). */
  exitApp(started: StartedInstance): Promise<void>;
  /**
   * Resolves once nothing of the instance runs any more (its processes, its pod's), as this runtime's world
   * shows it: never by sending to its address, which, once its network namespace is gone, routes off the machine.
   */
  gone(started: StartedInstance): Promise<void>;
  /**
   * What the runtime depends on to start and manage instances, made to fail and come back (Kubernetes: the
   * API server answering 500; local: its state folder gone). Running instances do not depend on it.
   */
  dependency: { what: string; goDown(): Promise<void>; goUp(): Promise<void> };
  /** Removes what `open` made (after every runtime is closed). */
  cleanup?(): Promise<void>;
}

/** The session app's GET /env answer. */
interface EnvReply {
  pid: number;
  count: number;
  env: Record<string, string | null>;
}

async function env(at: { host: string; port: number }): Promise<EnvReply> {
  const r = await fetch(`http://${at.host}:${at.port}/env`);
  assert.equal(r.status, 200);
  return (await r.json()) as EnvReply;
}

/** Records every onExit of a runtime; `exit(name)` resolves with the instance's (first) exit. */
class ExitLog {
  readonly #seen = new Map<string, InstanceExit[]>();
  readonly #waiting = new Map<string, ((e: InstanceExit) => void)[]>();

  constructor(rt: InstanceRuntime) {
    rt.onExit((name, e) => {
      this.#seen.set(name, [...(this.#seen.get(name) ?? []), e]);
      for (const w of this.#waiting.get(name) ?? []) w(e);
      this.#waiting.delete(name);
    });
  }

  exit(name: string): Promise<InstanceExit> {
    const seen = this.#seen.get(name)?.[0];
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiting.set(name, [...(this.#waiting.get(name) ?? []), resolve]));
  }

  count(name: string): number {
    return this.#seen.get(name)?.length ?? 0;
  }
}

/** A case's runtimes: each opened one is closed after the case, its instances deleted first. */
class Session {
  readonly names = new Set<string>();
  readonly #opened: InstanceRuntime[] = [];
  readonly #detached = new Set<InstanceRuntime>();

  constructor(
    readonly h: RuntimeHarness,
    t: TestContext,
  ) {
    t.after(async () => {
      for (const rt of this.#opened.reverse()) {
        if (this.#detached.has(rt)) continue; // what it left belongs to the runtime opened after it
        for (const n of this.names) await rt.delete(n).catch(() => {});
        await rt.close();
      }
      await h.cleanup?.();
    });
  }

  async open(): Promise<{ rt: InstanceRuntime; exits: ExitLog }> {
    const rt = await this.h.open();
    this.#opened.push(rt);
    return { rt, exits: new ExitLog(rt) };
  }

  /** Stops `rt` as a gateway that goes away (its instances left to the next runtime, as it documents). */
  async detach(rt: InstanceRuntime): Promise<void> {
    this.#detached.add(rt);
    await rt.detach();
  }

  spec(app: 'serve' | 'crash'): InstanceSpec {
    const s = this.h.spec(app);
    this.names.add(s.name);
    return s;
  }
}

/**
 * Registers the suite for one runtime.
 * @param name shown in the test names, e.g. `local (plain)`
 * @param harness makes the runtime under test, once per case
 */
export function runtimeConformance(name: string, harness: (t: TestContext) => Promise<RuntimeHarness>): void {
  describe(`InstanceRuntime conformance: ${name}`, () => {
    it('starts an instance that is ready and serves at the address start answered', async (t) => {
      const s = new Session(await harness(t), t);
      const { rt } = await s.open();
      const spec = s.spec('serve');
      const started = await rt.start(spec);
      assert.equal(started.name, spec.name);
      assert.ok(started.incarnation, 'an incarnation to tell it from a later one of the same name');
      assert.equal(typeof started.pid, s.h.capabilities.pids ? 'number' : 'object');
      const first = await env(started);
      assert.equal(first.env.K_SERVICE, spec.service);
      assert.equal((await env(started)).count, first.count + 1, 'one process answers');
      if (s.h.capabilities.logs) assert.ok(Array.isArray(rt.logs(spec.name)));
      else assert.equal(rt.logs(spec.name), undefined);
    });

    it('pauses and resumes as documented: the process kept (same pid, its counter goes on) or dropped (a new one)', async (t) => {
      const s = new Session(await harness(t), t);
      const { rt, exits } = await s.open();
      const spec = s.spec('serve');
      const started = await rt.start(spec);
      const before = await env(started);
      await rt.pause(spec.name);
      const moved = await rt.resume(spec.name);
      const at = moved ?? started;
      const after = await env(at);
      if (s.h.capabilities.pause === 'keeps-process') {
        assert.equal(moved, undefined, 'the same process keeps its address');
        assert.equal(after.pid, before.pid);
        assert.equal(after.count, before.count + 1);
      } else {
        assert.notEqual(after.pid, before.pid, 'a new process');
        assert.equal(after.count, 1, 'its memory starts over');
      }
      assert.equal(exits.count(spec.name), 0, 'a pause is no exit');
      // Twice in a row is fine too.
      await rt.pause(spec.name);
      const again = (await rt.resume(spec.name)) ?? at;
      assert.equal((await env(again)).env.K_SERVICE, spec.service);
    });

    it('deletes an instance: one onExit (requested), nothing of it runs after, and a second delete is a no-op', async (t) => {
      const s = new Session(await harness(t), t);
      const { rt, exits } = await s.open();
      const spec = s.spec('serve');
      const started = await rt.start(spec);
      await rt.delete(spec.name);
      assert.deepEqual((await exits.exit(spec.name)).requested, true);
      await s.h.gone(started);
      await rt.delete(spec.name);
      assert.equal(exits.count(spec.name), 1);
      await assert.rejects(rt.pause(spec.name));
      await assert.rejects(rt.resume(spec.name));
    });

    it('deletes a paused instance', async (t) => {
      const s = new Session(await harness(t), t);
      const { rt, exits } = await s.open();
      const spec = s.spec('serve');
      await rt.start(spec);
      await rt.pause(spec.name);
      await rt.delete(spec.name);
      assert.equal((await exits.exit(spec.name)).requested, true);
    });

    it('after a restart lists what the last runtime left, with its observed state, and adopts it (or, documented, ends it)', async (t) => {
      const s = new Session(await harness(t), t);
      const first = await s.open();
      const a = s.spec('serve');
      const b = s.spec('serve');
      const startedA = await first.rt.start(a);
      const startedB = await first.rt.start(b);
      const countA = (await env(startedA)).count;
      await first.rt.pause(b.name);
      assert.deepEqual(
        (await first.rt.list()).filter((i) => s.names.has(i.name)),
        [],
        'a live runtime lists none of its own',
      );
      await s.detach(first.rt);
      const second = await s.open();
      const listed = (await second.rt.list()).filter((i) => s.names.has(i.name));
      const record = (i: StartedInstance) => ({
        name: i.name,
        service: a.service,
        pid: i.pid,
        incarnation: i.incarnation,
        host: i.host,
        port: i.port,
      });
      if (!s.h.capabilities.adoptsAfterRestart) {
        assert.deepEqual(listed, []);
        assert.equal(await second.rt.adopt(record(startedA)), undefined);
        assert.equal((await first.exits.exit(a.name)).requested, true, 'ended by its runtime');
        await s.h.gone(startedA);
        return;
      }
      const byName = new Map(listed.map((i) => [i.name, i]));
      assert.deepEqual([...byName.keys()].sort(), [a.name, b.name].sort());
      assert.equal(byName.get(a.name)!.state, 'running');
      assert.equal(byName.get(b.name)!.state, 'paused');
      assert.equal(byName.get(a.name)!.incarnation, startedA.incarnation);
      assert.equal(byName.get(a.name)!.service, a.service);

      // A record of another incarnation (a name reused) is not adopted.
      assert.equal(await second.rt.adopt({ ...record(startedA), incarnation: 'not-this-one' }), undefined);
      const adoptedA = await second.rt.adopt(record(startedA));
      assert.equal(adoptedA?.state, 'running');
      assert.equal(await second.rt.adopt(record(startedA)), undefined, 'adopted once');
      assert.equal((await env(adoptedA!)).count, countA + 1, 'the same process, still serving');
      const adoptedB = await second.rt.adopt(record(startedB));
      assert.equal(adoptedB?.state, 'paused');
      const moved = await second.rt.resume(b.name);
      assert.equal((await env(moved ?? adoptedB!)).env.K_SERVICE, b.service);
      assert.deepEqual(
        (await second.rt.list()).filter((i) => s.names.has(i.name)),
        [],
        'adopted ones are managed now',
      );
      await second.rt.delete(a.name);
      assert.equal((await second.exits.exit(a.name)).requested, true, 'onExit comes from the adopting runtime');
      assert.equal(first.exits.count(a.name), 0, 'a detached runtime reports nothing');
    });

    it('rejects a start whose app exits before it is ready, reports its exit, and leaves nothing behind', async (t) => {
      const s = new Session(await harness(t), t);
      const { rt, exits } = await s.open();
      const spec = s.spec('crash');
      // At once, as the runtime sees the app exit: not at the start timeout (the harness gives a long one).
      await assert.rejects(rt.start(spec), (err: Error) => {
        assert.match(err.message, new RegExp(`(instance|sandbox of) ${spec.name}`));
        assert.match(err.message, /exit/, 'the app exited (code 3)');
        assert.doesNotMatch(err.message, /within/, 'not the start timeout');
        return true;
      });
      assert.equal((await exits.exit(spec.name)).requested, false, 'a failed start is no requested end');
      assert.equal(exits.count(spec.name), 1);
      await assert.rejects(rt.pause(spec.name));
      await rt.delete(spec.name);
      // A new runtime on the same state finds nothing of it either.
      await s.detach(rt);
      const next = await s.open();
      assert.deepEqual(
        (await next.rt.list()).filter((i) => i.name === spec.name),
        [],
      );
      // The runtime still starts others.
      const ok = await next.rt.start(s.spec('serve'));
      assert.equal((await env(ok)).count, 1);
    });

    it('reports an instance ended from outside once (not requested), and then knows it no more', async (t) => {
      const s = new Session(await harness(t), t);
      const { rt, exits } = await s.open();
      const spec = s.spec('serve');
      const other = s.spec('serve');
      const started = await rt.start(spec);
      const bystander = await rt.start(other);
      await s.h.endOutside(started);
      assert.equal((await exits.exit(spec.name)).requested, false);
      await assert.rejects(rt.pause(spec.name));
      await rt.delete(spec.name);
      assert.equal(exits.count(spec.name), 1);
      assert.equal((await env(bystander)).env.K_SERVICE, other.service, 'the others go on');
      assert.equal(exits.count(other.name), 0);
    });

    it('reports an app that exits by itself once (not requested), knows it no more, and leaves nothing of it running', async (t) => {
      const s = new Session(await harness(t), t);
      const { rt, exits } = await s.open();
      const spec = s.spec('serve');
      const other = s.spec('serve');
      const started = await rt.start(spec);
      const bystander = await rt.start(other);
      await s.h.exitApp(started);
      assert.equal((await exits.exit(spec.name)).requested, false);
      await s.h.gone(started);
      await assert.rejects(rt.pause(spec.name));
      await rt.delete(spec.name);
      assert.equal(exits.count(spec.name), 1);
      assert.equal((await env(bystander)).env.K_SERVICE, other.service, 'the others go on');
      assert.equal(exits.count(other.name), 0);
    });

    it('survives what it depends on failing mid-way: a start fails, nothing running is lost, all works once back', async (t) => {
      const h = await harness(t);
      const s = new Session(h, t);
      const { rt, exits } = await s.open();
      const spec = s.spec('serve');
      const started = await rt.start(spec);
      const before = await env(started);
      await h.dependency.goDown();
      let pausedWhileDown = false;
      try {
        const failed = s.spec('serve');
        await assert.rejects(rt.start(failed), Error, `a start fails while ${h.dependency.what} is down`);
        // A pause needs what is down on some runtimes (Kubernetes: a patch), not on others (local: a signal):
        // either it fails, or it did what it says. Never an end.
        pausedWhileDown = await rt.pause(spec.name).then(
          () => true,
          () => false,
        );
        assert.equal(exits.count(failed.name), 0, 'a start refused before anything ran reports no exit');
      } finally {
        await h.dependency.goUp();
      }
      assert.equal(exits.count(spec.name), 0, 'a failed call ends no instance');
      const moved = pausedWhileDown ? await rt.resume(spec.name) : undefined;
      let at = moved ?? started;
      const now = await env(at);
      if (!pausedWhileDown || s.h.capabilities.pause === 'keeps-process') {
        assert.equal(now.pid, before.pid, 'still the same app');
        assert.equal(now.count, before.count + 1);
      }
      await rt.pause(spec.name);
      at = (await rt.resume(spec.name)) ?? at;
      assert.equal((await env(at)).env.K_SERVICE, spec.service);
      const next = await rt.start(s.spec('serve'));
      assert.equal((await env(next)).count, 1, 'starts work again');
      await rt.delete(spec.name);
      assert.equal((await exits.exit(spec.name)).requested, true);
    });
  });
}

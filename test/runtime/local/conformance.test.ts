/**
 * The runtime conformance suite (test/runtime/conformance.ts) on the local runtime, plain (process groups:
 * pause = SIGSTOP keeps the process; detached instances outlive the runtime and are adopted by the next
 * one) and isolated with `--isolation namespaces` (pause freezes and keeps the process; isolated instances
 * end with their runtime, so a restart adopts none, as local-runtime.ts documents). An app exits by itself
 * when its process group is killed (as an OOM kill would); what the runtime depends on is its state folder,
 * made to fail by moving it away (a running instance does not need it; a start does).
 */
import { chmodSync } from 'node:fs';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { silentLogger } from '../../../src/common/log.ts';
import { createIsolation } from '../../../src/runtime/local/isolation/choose-isolation.ts';
import { LocalRuntime } from '../../../src/runtime/local/local-runtime.ts';
import type { InstanceSpec } from '../../../src/runtime/runtime.ts';
import { APP, waitFor } from '../../gateway/helpers/harness.ts';
import { type RuntimeHarness, runtimeConformance } from '../conformance.ts';
import { processesOf } from './isolation/helpers.ts';

function spec(app: 'serve' | 'crash', isolated: boolean): InstanceSpec {
  const name = `conf-${Math.random().toString(36).slice(2, 7)}`;
  return {
    name,
    service: 'conf',
    configuration: 'conf',
    revision: 'conf-00001',
    argv: app === 'serve' ? ['node', APP] : ['node', '-e', 'process.exit(3)'],
    env: {},
    workingDir: dirname(APP),
    // Long: a crashing app must fail its start at once, and the suite checks it was not this timeout.
    startTimeoutMs: app === 'serve' ? 15_000 : 60_000,
    ...(isolated ? { sandbox: { readOnlyPaths: [], limits: {}, publicEgress: false } } : {}),
  };
}

async function localHarness(isolated: boolean): Promise<RuntimeHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'tether-conf-'));
  chmodSync(dir, 0o755); // an isolated instance's uid traverses it
  let n = 0;
  return {
    capabilities: { pause: 'keeps-process', adoptsAfterRestart: !isolated, pids: true, logs: true },
    async open() {
      // Each runtime its own isolation (a runtime closes its isolation with it), one state folder for all.
      const isolation = isolated
        ? await createIsolation({
            requested: 'namespaces',
            why: 'test',
            hidden: [],
            dir: join(dir, `sandbox-${n++}`),
            log: silentLogger(),
          })
        : undefined;
      return new LocalRuntime({
        log: silentLogger(),
        graceMs: 1000,
        stateDir: join(dir, 'state'),
        ...(isolation ? { isolation } : {}),
      });
    },
    spec: (app) => spec(app, isolated),
    async endOutside(started) {
      process.kill(-started.pid!, 'SIGKILL'); // the instance's whole process group, as an OOM kill or kill -9 would
    },
    async exitApp(started) {
      process.kill(-started.pid!, 'SIGKILL'); // a process is its app: its exit is the app's
    },
    dependency: {
      what: 'the state folder',
      goDown: () => rename(join(dir, 'state'), join(dir, 'state.down')),
      async goUp() {
        await rm(join(dir, 'state'), { recursive: true, force: true });
        await rename(join(dir, 'state.down'), join(dir, 'state'));
      },
    },
    async gone(started) {
      await waitFor(`no process of ${started.name}`, () => processesOf(started.name).length === 0);
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

runtimeConformance('local (plain)', () => localHarness(false));
runtimeConformance('local (isolated: --isolation namespaces)', () => localHarness(true));
